package estimate

import (
	"fmt"
	"math"
)

// Option is one flag of mqsim estimate: the field of Input it sets, its default (""
// when the flag is required) and where that default comes from.
type Option struct {
	Name    string // the flag, without "--"
	Kind    string // the kind of value, for the flag's help: RATE, SIZE, BYTES/S, DURATION or N
	Default string // "" when required
	Usage   string // what the value is, with an example
	Source  string // why the default is what it is ("" for the workload's own flags)
	set     func(in *Input, flag, value string) error
}

// Options are the flags of mqsim estimate: the workload first, then the assumptions.
// Kafka's docs named in a Source are docs/design.html ("Don't fear the filesystem") and
// docs/ops.html (6.7 "Hardware and OS") of apache/kafka.
var Options = []Option{
	{Name: "rate", Kind: "RATE", Usage: "messages produced per second, e.g. 1M/s or 500k/s", set: func(in *Input, f, v string) (err error) {
		in.Rate, err = ParseRate(f, v)
		return err
	}},
	{Name: "size", Kind: "SIZE", Usage: "bytes per message, e.g. 1KB (1000 B) or 1KiB (1024 B)", set: func(in *Input, f, v string) (err error) {
		in.Size, err = ParseSize(f, v)
		return err
	}},
	{Name: "retention", Kind: "DURATION", Usage: "how long messages are kept, e.g. 7d or 12h", set: func(in *Input, f, v string) (err error) {
		in.Retention, err = ParseDuration(f, v)
		return err
	}},
	{Name: "rf", Kind: "N", Default: "3", Usage: "replication factor: copies of each partition",
		Source: "the usual production choice, which survives a broker down with min.insync.replicas=2 (Kafka's own default.replication.factor is 1)",
		set: func(in *Input, f, v string) (err error) {
			in.RF, err = ParseCount(f, v)
			return err
		}},
	{Name: "consumers", Kind: "N", Default: "1", Usage: "consumers in the largest consumer group (each needs a partition of its own)",
		Source: "one consumer; a group's consumers share its partitions, one consumer per partition (Kafka's docs, design.html)",
		set: func(in *Input, f, v string) (err error) {
			in.Consumers, err = ParseCount(f, v)
			return err
		}},
	{Name: "groups", Kind: "N", Default: "1", Usage: "consumer groups that each read every message (the fan-out)",
		Source: "one application reading the topic",
		set: func(in *Input, f, v string) (err error) {
			in.Groups, err = ParseCount(f, v)
			return err
		}},
	{Name: "partition-rate", Kind: "BYTES/S", Default: "10MB/s", Usage: "bytes per second one partition takes (measure yours)",
		Source: "a cautious assumption of this tool, not from Kafka's docs: one partition is one leader's log on one broker, and its rate depends on batching, compression and the consumers' processing, so measure yours",
		set: func(in *Input, f, v string) (err error) {
			in.PartitionRate, err = ParseByteRate(f, v)
			return err
		}},
	{Name: "disk", Kind: "SIZE", Default: "10TB", Usage: "log storage per broker",
		Source: "an assumption of this tool: Kafka's docs (ops.html, 6.7) describe brokers with eight 7200rpm SATA drives but not their size",
		set: func(in *Input, f, v string) (err error) {
			in.Disk, err = ParseSize(f, v)
			return err
		}},
	{Name: "disk-rate", Kind: "BYTES/S", Default: "600MB/s", Usage: "sequential write bandwidth of a broker's disks",
		Source: "Kafka's docs (design.html, \"Don't fear the filesystem\"): linear writes on six 7200rpm SATA drives in RAID-5, about 600MB/s",
		set: func(in *Input, f, v string) (err error) {
			in.DiskRate, err = ParseByteRate(f, v)
			return err
		}},
	{Name: "nic", Kind: "BYTES/S", Default: "10Gbit/s", Usage: "network bandwidth of a broker, each direction (full duplex)",
		Source: "an assumption of this tool: a common data-centre network card (Kafka's docs name none)",
		set: func(in *Input, f, v string) (err error) {
			in.NIC, err = ParseByteRate(f, v)
			return err
		}},
	{Name: "cache-window", Kind: "DURATION", Default: "30s", Usage: "recent writes kept in the page cache, for consumers that keep up",
		Source: "Kafka's docs (ops.html, 6.7 Hardware and OS): buffer about 30 seconds, memory = write_throughput*30",
		set: func(in *Input, f, v string) (err error) {
			in.CacheWindow, err = ParseDuration(f, v)
			return err
		}},
}

// maxCount bounds the partitions and brokers an estimate may come to: beyond it the
// input is surely a slip of units, and the figures would no longer fit an int.
const maxCount = 1e12

// FromFlags builds an Input from the flags' values: lookup returns the value typed for a
// flag and whether it was typed; a flag not typed takes its default. The first bad or
// missing value is the error, naming its flag.
func FromFlags(lookup func(name string) (value string, typed bool)) (Input, error) {
	var in Input
	for _, o := range Options {
		v, typed := lookup(o.Name)
		if !typed {
			if o.Default == "" {
				return Input{}, fmt.Errorf("--%s is required: %s", o.Name, o.Usage)
			}
			v = o.Default
		}
		if err := o.set(&in, o.Name, v); err != nil {
			return Input{}, err
		}
	}
	ingress := in.Rate * in.Size
	for _, ratio := range []float64{
		ingress / in.PartitionRate,
		ingress * in.Retention * float64(in.RF) / in.Disk,
		ingress * float64(in.RF) / in.DiskRate,
		ingress * float64(in.RF+in.Groups) / in.NIC,
		float64(in.RF) * float64(in.Consumers),
	} {
		if math.IsInf(ratio, 0) || ratio > maxCount {
			return Input{}, fmt.Errorf("this workload needs more than 10^12 partitions or brokers: check the units of --rate, --size and --retention")
		}
	}
	return in, nil
}
