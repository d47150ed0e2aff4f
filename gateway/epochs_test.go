package gateway_test

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetForLeaderEpoch of the leader's current epoch answers its log end (5 records
// produced to t/0); asked with a current leader epoch newer than the leader's, it is
// UNKNOWN_LEADER_EPOCH, as Kafka fences it. DescribeCluster lists the three brokers at
// their listening addresses.
func TestOffsetForLeaderEpochAndDescribeCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("opens sockets")
	}
	srv, _, logs := serve(t, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addrs()...), kgo.DefaultProduceTopic("t"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for range 5 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Partition: 0, Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatalf("produce: %v\nlog:\n%s", err, logs)
		}
	}
	meta, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	var epoch int32 = -1
	for _, tp := range meta.Topics {
		for _, p := range tp.Partitions {
			if *tp.Topic == "t" && p.Partition == 0 {
				epoch = p.LeaderEpoch
			}
		}
	}
	ask := func(current int32) kmsg.OffsetForLeaderEpochResponseTopicPartition {
		req := kmsg.NewPtrOffsetForLeaderEpochRequest()
		req.ReplicaID = -1
		rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = 0, current, epoch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("OffsetForLeaderEpoch answered %+v", resp.Topics)
		}
		return resp.Topics[0].Partitions[0]
	}
	if got := ask(epoch); got.ErrorCode != 0 || got.LeaderEpoch != epoch || got.EndOffset != 5 {
		t.Errorf("OffsetForLeaderEpoch(epoch %d): error %d, epoch %d, end %d; want 0, %d, 5", epoch, got.ErrorCode, got.LeaderEpoch, got.EndOffset, epoch)
	}
	if got := ask(epoch + 1); got.ErrorCode != kerr.UnknownLeaderEpoch.Code {
		t.Errorf("OffsetForLeaderEpoch with current epoch %d (the leader's is %d): error %d, want UNKNOWN_LEADER_EPOCH (%d)", epoch+1, epoch, got.ErrorCode, kerr.UnknownLeaderEpoch.Code)
	}

	dc, err := kmsg.NewPtrDescribeClusterRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for _, b := range dc.Brokers {
		addrs = append(addrs, net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))))
	}
	if dc.ErrorCode != 0 || dc.ClusterID != "mqsim" || dc.ControllerID != 1 || len(addrs) != 3 ||
		addrs[0] != srv.Addrs()[0] || addrs[1] != srv.Addrs()[1] || addrs[2] != srv.Addrs()[2] {
		t.Errorf("DescribeCluster: error %d, cluster %q, controller %d, brokers %v; want 0, mqsim, 1, %v", dc.ErrorCode, dc.ClusterID, dc.ControllerID, addrs, srv.Addrs())
	}
}
