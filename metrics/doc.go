// Package metrics computes the figures a Kafka operator watches from a run's trace: a view
// of the recording, never a second judge. Each figure carries the name Kafka gives it
// (docs/ops.html, "Monitoring"; ReplicaManager.scala, KafkaController.scala,
// QuorumControllerMetrics.java, BrokerTopicMetrics.java, FetchMetricsRegistry.java,
// AbstractCoordinator.java) and is scoped to the cluster, a controller, a broker, a
// partition or a consumer.
//
// Gauges are instantaneous: UnderReplicatedPartitions and UnderMinIsrPartitionCount per
// broker (the partitions it leads whose ISR is smaller than the replica set, or than
// min.insync.replicas), their per-partition forms UnderReplicated and UnderMinIsr,
// InSyncReplicasCount, OfflinePartitionsCount and ActiveControllerCount (summed over the
// controllers: exactly 1 is healthy), and a consumer's records-lag-max. Rates are events
// per second over a window of virtual time (Window, 10s unless the caller says):
// IsrShrinksPerSec and IsrExpandsPerSec (a leader's AlterPartition accepted, marked on the
// leader as Partition.scala marks it), LeaderElectionRate (the controller's elections;
// Kafka's LeaderElectionRateAndTimeMs also times them), UncleanLeaderElectionsPerSec,
// TotalProduceRequestsPerSec and FailedProduceRequestsPerSec (per partition batch a leader
// took or refused, as ReplicaManager.appendToLocalLog marks BrokerTopicMetrics),
// TotalFetchRequestsPerSec (fetch requests a broker received: only when the trace keeps
// messages, world trace-messages=true, which mqsim export turns on), and a consumer's
// rebalance-rate-per-hour (the generations it joined).
//
// Load (LoadOf) is the per-partition view beside them: the records, log bytes and producer
// batches each partition's leaders appended (broker.Appended, coordinators' writes left
// out), the fetch requests for it (with trace-messages only), over the run and over the
// last window, and its leader now: what show load and the TUI's Metrics pane print, where
// a hot partition shows as a share of its topic's records.
//
// Throughput (Measure) is a workload's view for the measure command: records and bytes
// per second acknowledged and read, p50/p99 latency from send to ack, from send to the
// poll that read a record, and of the polls that brought records, producer batches and
// their bytes on the wire, the bytes the leaders stored (compressed as they came), and
// per partition the acknowledged sends, their rate and latency and the produce bytes sent
// to its leader (a hot partition: the one whose latency grows as its rate stops growing),
// over a window of simulated time. It reads the producers' BatchSent events, the leaders'
// Appended events and the client history (send and poll times), the one figure here that
// needs the history: latency is the clients' to see.
//
// Every figure is derived from typed trace events (Timeline.Build reads sim.Event.Data,
// never text), so the figures of a run are the same wherever they are shown: show
// metrics, the TUI's Metrics pane, mqsim export --format metrics.
//
// What mqsim simplifies: the partition state behind the gauges is the controller's
// decisions (ISR and leader as it decided them) joined with each broker's own "leader"
// and "follower" events, where Kafka's brokers compute the gauges from their own copy of
// the ISR, which follows the controller's by a metadata push; a quorum controller's
// decision counts when it is made, not when its record commits. A consumer's lag is the
// partition leader's high watermark minus the consumer's position (the offset after the
// last record it polled, or the position it reset to), which is what
// kafka-consumer-groups shows, where the client's records-lag uses the high watermark its
// last fetch response carried. Kafka's meters are exponentially weighted; mqsim's rates
// count the events of the last Window exactly, so a test can state them.
package metrics
