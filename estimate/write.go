package estimate

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Write prints the estimate r of in: the workload, the assumptions with the flags that
// change them, then each figure with its formula, first in names and then in numbers,
// so that a learner can redo the arithmetic. Every unit printed is decimal.
func Write(w io.Writer, in Input, r Result) error {
	var b strings.Builder
	b.WriteString("Workload (units are decimal: 1 KB = 1000 B, 1 GB = 10^9 B)\n")
	fmt.Fprintf(&b, "  %-15s %s messages/s\n", "rate", number(in.Rate))
	fmt.Fprintf(&b, "  %-15s %s B\n", "size", number(in.Size))
	fmt.Fprintf(&b, "  %-15s %s\n", "retention", seconds(in.Retention))
	fmt.Fprintf(&b, "  %-15s %d\n", "rf", in.RF)
	fmt.Fprintf(&b, "  %-15s %d in the largest group, %s reading every message\n", "consumers", in.Consumers, plural(in.Groups, "group"))

	b.WriteString("Assumptions (mqsim estimate --help says where each default comes from)\n")
	for _, a := range []struct{ flag, value, what string }{
		{"--partition-rate", rate(in.PartitionRate), "one partition's throughput"},
		{"--disk", bytes(in.Disk), "log storage per broker"},
		{"--disk-rate", rate(in.DiskRate), "a broker's disk write bandwidth"},
		{"--nic", rate(in.NIC), "a broker's network, each way (" + bits(in.NIC) + ")"},
		{"--cache-window", seconds(in.CacheWindow), "recent writes kept in the page cache"},
	} {
		fmt.Fprintf(&b, "  %-16s %-10s %s\n", a.flag, a.value, a.what)
	}

	b.WriteString("\nFigure               Value      Formula\n")
	row := func(name, value string, formula ...string) {
		for i, f := range formula {
			if i > 0 {
				name, value = "", ""
			}
			fmt.Fprintf(&b, "%-20s %-10s %s\n", name, value, f)
		}
	}
	n := float64(r.Brokers)
	row("ingress", rate(r.Ingress), fmt.Sprintf("rate × size = %s/s × %s B", number(in.Rate), number(in.Size)))
	row("written per day", bytes(r.PerDay), fmt.Sprintf("ingress × 86,400 s = %s × 86,400 s", rate(r.Ingress)))
	row("storage", bytes(r.Storage), "ingress × retention × rf",
		fmt.Sprintf("  = %s × %s s × %d", rate(r.Ingress), number(in.Retention), in.RF))
	row("partitions", strconv.Itoa(r.Partitions), "max(ceil(ingress / partition rate), consumers)",
		fmt.Sprintf("  = max(ceil(%s / %s), %d) = max(%d, %d)", rate(r.Ingress), rate(in.PartitionRate), in.Consumers, r.PartitionsForThroughput, in.Consumers))
	row("disk writes", rate(r.DiskWrites), fmt.Sprintf("ingress × rf = %s × %d: leaders, followers", rate(r.Ingress), in.RF))
	row("network in", rate(r.NetworkIn), fmt.Sprintf("ingress × rf = %s × %d: producers, followers", rate(r.Ingress), in.RF))
	row("network out", rate(r.NetworkOut), "ingress × (rf - 1 + groups)",
		fmt.Sprintf("  = %s × (%d + %d): to followers, to consumers", rate(r.Ingress), in.RF-1, in.Groups))
	row("brokers", strconv.Itoa(r.Brokers), fmt.Sprintf("the largest need below (%s), rounded up", r.Binding))
	for _, l := range Limits {
		row("  for "+string(l), strconv.Itoa(r.BrokersFor[l]), "  "+brokerFormula(l, in, r))
	}
	row("storage per broker", bytes(r.StoragePerBroker), fmt.Sprintf("storage / brokers = %s / %d", bytes(r.Storage), r.Brokers))
	row("replicas per broker", strconv.Itoa(r.ReplicasPerBroker), fmt.Sprintf("partitions × rf / brokers = ceil(%d / %d)", r.Partitions*in.RF, r.Brokers))
	row("page cache", bytes(r.PageCache), fmt.Sprintf("disk writes × cache window = %s × %s s", rate(r.DiskWrites), number(in.CacheWindow)))
	row("  per broker", bytes(r.PageCache/n), fmt.Sprintf("page cache / brokers = %s / %d", bytes(r.PageCache), r.Brokers))

	b.WriteString("\nLeft out: headroom (the brokers above run at 100% of their binding limit),\n" +
		"compression, record and batch headers, index files, tiered storage and the\n" +
		"partitions of other topics.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// brokerFormula is the formula of the brokers one limit needs, with its numbers.
func brokerFormula(l Limit, in Input, r Result) string {
	switch l {
	case ForStorage:
		return fmt.Sprintf("storage / disk = %s / %s", bytes(r.Storage), bytes(in.Disk))
	case ForDiskWrites:
		return fmt.Sprintf("disk writes / disk rate = %s / %s", rate(r.DiskWrites), rate(in.DiskRate))
	case ForNetworkIn:
		return fmt.Sprintf("network in / nic = %s / %s", rate(r.NetworkIn), rate(in.NIC))
	case ForNetworkOut:
		return fmt.Sprintf("network out / nic = %s / %s", rate(r.NetworkOut), rate(in.NIC))
	case ForReplicas:
		return "rf: one broker per replica of a partition"
	}
	return ""
}

// significant is v rounded to four significant digits, without trailing zeros.
func significant(v float64) string {
	if v == 0 {
		return "0"
	}
	digits := max(0, 3-int(math.Floor(math.Log10(math.Abs(v)))))
	return trimmed(strconv.FormatFloat(v, 'f', digits, 64))
}

// trimmed drops the trailing zeros of a decimal fraction, and its point when bare.
func trimmed(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	return strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
}

// scaled writes v in the largest decimal unit of prefixes that keeps it at least 1.
func scaled(v float64, unit string) string {
	prefixes := []string{"", "K", "M", "G", "T", "P", "E"}
	if v > 0 { // round first, so that 999.96 GB shows as 1 TB, not 1000 GB
		p := math.Pow(10, 3-math.Floor(math.Log10(v)))
		v = math.Round(v*p) / p
	}
	i := 0
	for i+1 < len(prefixes) && v >= math.Pow(1000, float64(i+1)) {
		i++
	}
	return (significant(v / math.Pow(1000, float64(i)))) + " " + prefixes[i] + unit
}

func bytes(v float64) string { return scaled(v, "B") }
func rate(v float64) string  { return scaled(v, "B") + "/s" }
func bits(v float64) string  { return scaled(v*8, "bit") + "/s" }

// number writes v with a comma between thousands, and its fraction if it has one.
func number(v float64) string {
	whole := math.Floor(v)
	s := strconv.FormatFloat(whole, 'f', 0, 64)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if frac := v - whole; frac > 0 {
		s += strings.TrimPrefix(trimmed(strconv.FormatFloat(frac, 'f', 6, 64)), "0")
	}
	return s
}

// seconds writes a duration in seconds, and in days when it is a day or more.
func seconds(v float64) string {
	s := number(v) + " s"
	if v >= secondsPerDay {
		s += " (" + (significant(v / secondsPerDay)) + " days)"
	}
	return s
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
