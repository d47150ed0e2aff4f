// Package estimate is the back-of-the-envelope part of "design a distributed message
// queue": from a workload (messages per second, their size, how long they are kept, the
// replication factor, the consumers) and a few named assumptions about the hardware, it
// computes the ingress, the storage, the partitions, the brokers (for disk space, disk
// writes and the network), and the page cache that lets consumers which keep up read
// from memory. Each figure comes with the formula that produced it (Write), so a learner
// can check their own numbers. mqsim estimate is its command.
//
// The arithmetic is in float64 bytes and seconds; every figure a count (partitions,
// brokers) is rounded up. It is pure: no mqsim package is imported.
package estimate

import "math"

// Input is a workload and the assumptions the estimate rests on, in bytes, seconds and
// counts. Options lists the flags that set each field and the source of each default.
type Input struct {
	Rate      float64 // messages per second produced
	Size      float64 // bytes per message
	Retention float64 // seconds a message is kept
	RF        int     // replication factor: copies of each partition
	Consumers int     // consumers in the largest consumer group, each needing a partition
	Groups    int     // consumer groups that each read every message

	PartitionRate float64 // bytes per second one partition takes
	Disk          float64 // bytes of log storage per broker
	DiskRate      float64 // bytes per second a broker's disks write
	NIC           float64 // bytes per second a broker's network card carries each way
	CacheWindow   float64 // seconds of recent writes the page cache holds
}

// Result is the estimate. Every rate is bytes per second over the whole cluster unless
// its name says per broker.
type Result struct {
	Ingress float64 // Rate × Size
	PerDay  float64 // bytes produced in a day: Ingress × 86,400 s
	Storage float64 // Ingress × Retention × RF

	PartitionsForThroughput int // ceil(Ingress / PartitionRate)
	Partitions              int // max(PartitionsForThroughput, Consumers)

	DiskWrites float64 // Ingress × RF: the leader's write and RF-1 followers' copies
	NetworkIn  float64 // Ingress × RF: producers to leaders, and leaders' data into followers
	NetworkOut float64 // Ingress × (RF-1) + Ingress × Groups: to followers and to consumers

	BrokersFor map[Limit]int // the brokers each limit alone needs
	Brokers    int           // the largest of BrokersFor
	Binding    Limit         // the limit that sets Brokers (the first in Limits on a tie)

	PageCache          float64 // DiskWrites × CacheWindow, over the cluster
	PageCachePerBroker float64 // PageCache / Brokers
	StoragePerBroker   float64 // Storage / Brokers
	ReplicasPerBroker  int     // ceil(Partitions × RF / Brokers)
}

// Limit is one reason to add brokers.
type Limit string

// Limits are the reasons for brokers, in the order they are printed.
var Limits = []Limit{ForStorage, ForDiskWrites, ForNetworkIn, ForNetworkOut, ForReplicas}

const (
	ForStorage    Limit = "storage"
	ForDiskWrites Limit = "disk writes"
	ForNetworkIn  Limit = "network in"
	ForNetworkOut Limit = "network out"
	ForReplicas   Limit = "replicas" // each of a partition's RF replicas on its own broker
)

// secondsPerDay is a day in seconds.
const secondsPerDay = 86400

// ceilDiv is ceil(a / b) for positive a and b.
func ceilDiv(a, b float64) int {
	return int(math.Ceil(a / b))
}

// Compute is the estimate of in. in must be valid (as FromFlags returns it).
func Compute(in Input) Result {
	var r Result
	r.Ingress = in.Rate * in.Size
	r.PerDay = r.Ingress * secondsPerDay
	r.Storage = r.Ingress * in.Retention * float64(in.RF)

	r.PartitionsForThroughput = ceilDiv(r.Ingress, in.PartitionRate)
	r.Partitions = max(r.PartitionsForThroughput, in.Consumers)

	r.DiskWrites = r.Ingress * float64(in.RF)
	r.NetworkIn = r.Ingress * float64(in.RF)
	r.NetworkOut = r.Ingress*float64(in.RF-1) + r.Ingress*float64(in.Groups)

	r.BrokersFor = map[Limit]int{
		ForStorage:    ceilDiv(r.Storage, in.Disk),
		ForDiskWrites: ceilDiv(r.DiskWrites, in.DiskRate),
		ForNetworkIn:  ceilDiv(r.NetworkIn, in.NIC),
		ForNetworkOut: ceilDiv(r.NetworkOut, in.NIC),
		ForReplicas:   in.RF,
	}
	for _, l := range Limits {
		if n := r.BrokersFor[l]; n > r.Brokers {
			r.Brokers, r.Binding = n, l
		}
	}

	r.PageCache = r.DiskWrites * in.CacheWindow
	r.PageCachePerBroker = r.PageCache / float64(r.Brokers)
	r.StoragePerBroker = r.Storage / float64(r.Brokers)
	r.ReplicasPerBroker = ceilDiv(float64(r.Partitions*in.RF), float64(r.Brokers))
	return r
}
