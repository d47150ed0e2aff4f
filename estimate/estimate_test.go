package estimate

import (
	"math"
	"strings"
	"testing"
)

// flags builds an Input as mqsim estimate does from the flags typed (the others take
// their defaults).
func flags(t *testing.T, typed map[string]string) Input {
	t.Helper()
	in, err := FromFlags(func(name string) (string, bool) {
		v, ok := typed[name]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// near is a == b up to float64 rounding of the last digits.
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }

// Each case's figures are worked out by hand in its comments; the defaults are
// partition-rate 10 MB/s = 1e7 B/s, disk 10 TB = 1e13 B, disk-rate 600 MB/s = 6e8 B/s,
// nic 10 Gbit/s = 1.25e9 B/s, cache-window 30 s.
func TestFiguresMatchHandComputedCases(t *testing.T) {
	for _, tc := range []struct {
		name  string
		typed map[string]string
		want  Result
	}{
		{
			// The interview's numbers. ingress = 1e6/s × 1000 B = 1e9 B/s; a day is
			// 1e9 × 86,400 = 8.64e13 B; storage = 1e9 × 604,800 s × 3 = 1.8144e15 B.
			// partitions = max(ceil(1e9 / 1e7), 1) = 100. disk writes = network in =
			// 1e9 × 3 = 3e9 B/s; network out = 1e9 × (2 + 1) = 3e9 B/s. Brokers:
			// storage ceil(1.8144e15 / 1e13) = ceil(181.44) = 182, disk writes
			// ceil(3e9 / 6e8) = 5, network ceil(3e9 / 1.25e9) = ceil(2.4) = 3 each way,
			// replicas 3: 182, storage binds. Page cache 3e9 × 30 = 9e10 B, 9e10 / 182
			// per broker; storage per broker 1.8144e15 / 182; replicas per broker
			// ceil(100 × 3 / 182) = 2.
			name:  "1M/s of 1KB kept 7d",
			typed: map[string]string{"rate": "1M/s", "size": "1KB", "retention": "7d", "rf": "3"},
			want: Result{
				Ingress: 1e9, PerDay: 8.64e13, Storage: 1.8144e15,
				PartitionsForThroughput: 100, Partitions: 100,
				DiskWrites: 3e9, NetworkIn: 3e9, NetworkOut: 3e9,
				BrokersFor: map[Limit]int{ForStorage: 182, ForDiskWrites: 5, ForNetworkIn: 3, ForNetworkOut: 3, ForReplicas: 3},
				Brokers:    182, Binding: ForStorage,
				PageCache: 9e10, PageCachePerBroker: 9e10 / 182, StoragePerBroker: 1.8144e15 / 182, ReplicasPerBroker: 2,
			},
		},
		{
			// Fan-out binds. ingress = 500,000/s × 1024 B = 5.12e8 B/s; a day 4.4236800e13;
			// storage = 5.12e8 × 3600 s × 3 = 5.5296e12 B. partitions = max(ceil(51.2), 24)
			// = 52. disk writes = network in = 1.536e9; network out = 5.12e8 × (2 + 8)
			// = 5.12e9. Brokers: storage ceil(0.55296) = 1, disk ceil(1.536e9 / 6e8) =
			// ceil(2.56) = 3, in ceil(1.2288) = 2, out ceil(4.096) = 5, replicas 3: 5,
			// network out binds. Page cache 1.536e9 × 30 = 4.608e10, / 5 = 9.216e9;
			// storage per broker 1.10592e12; replicas per broker ceil(52 × 3 / 5) =
			// ceil(31.2) = 32.
			name:  "500k/s of 1KiB kept 1h, read by 8 groups",
			typed: map[string]string{"rate": "500k/s", "size": "1KiB", "retention": "1h", "consumers": "24", "groups": "8"},
			want: Result{
				Ingress: 5.12e8, PerDay: 4.42368e13, Storage: 5.5296e12,
				PartitionsForThroughput: 52, Partitions: 52,
				DiskWrites: 1.536e9, NetworkIn: 1.536e9, NetworkOut: 5.12e9,
				BrokersFor: map[Limit]int{ForStorage: 1, ForDiskWrites: 3, ForNetworkIn: 2, ForNetworkOut: 5, ForReplicas: 3},
				Brokers:    5, Binding: ForNetworkOut,
				PageCache: 4.608e10, PageCachePerBroker: 9.216e9, StoragePerBroker: 1.10592e12, ReplicasPerBroker: 32,
			},
		},
		{
			// Consumers bind the partitions. ingress = 1000/s × 100 B = 1e5 B/s;
			// storage = 1e5 × 86,400 × 1 = 8.64e9 B. partitions = max(ceil(0.01), 12)
			// = 12. Every broker limit comes to 1 (out: 1e5 × (0 + 1) / 1.25e9): 1
			// broker, storage binds (the first limit on a tie). Page cache 1e5 × 30 = 3e6;
			// replicas per broker 12.
			name:  "a small keyed topic for 12 consumers, rf 1",
			typed: map[string]string{"rate": "1000/s", "size": "100B", "retention": "1d", "rf": "1", "consumers": "12"},
			want: Result{
				Ingress: 1e5, PerDay: 8.64e9, Storage: 8.64e9,
				PartitionsForThroughput: 1, Partitions: 12,
				DiskWrites: 1e5, NetworkIn: 1e5, NetworkOut: 1e5,
				BrokersFor: map[Limit]int{ForStorage: 1, ForDiskWrites: 1, ForNetworkIn: 1, ForNetworkOut: 1, ForReplicas: 1},
				Brokers:    1, Binding: ForStorage,
				PageCache: 3e6, PageCachePerBroker: 3e6, StoragePerBroker: 8.64e9, ReplicasPerBroker: 12,
			},
		},
	} {
		got := Compute(flags(t, tc.typed))
		w := tc.want
		for _, f := range []struct {
			name      string
			got, want float64
		}{
			{"ingress", got.Ingress, w.Ingress}, {"per day", got.PerDay, w.PerDay}, {"storage", got.Storage, w.Storage},
			{"disk writes", got.DiskWrites, w.DiskWrites}, {"network in", got.NetworkIn, w.NetworkIn},
			{"network out", got.NetworkOut, w.NetworkOut}, {"page cache", got.PageCache, w.PageCache},
			{"page cache per broker", got.PageCachePerBroker, w.PageCachePerBroker},
			{"storage per broker", got.StoragePerBroker, w.StoragePerBroker},
		} {
			if !near(f.got, f.want) {
				t.Errorf("%s: %s = %g, want %g", tc.name, f.name, f.got, f.want)
			}
		}
		for _, f := range []struct {
			name      string
			got, want int
		}{
			{"partitions for throughput", got.PartitionsForThroughput, w.PartitionsForThroughput},
			{"partitions", got.Partitions, w.Partitions}, {"brokers", got.Brokers, w.Brokers},
			{"replicas per broker", got.ReplicasPerBroker, w.ReplicasPerBroker},
		} {
			if f.got != f.want {
				t.Errorf("%s: %s = %d, want %d", tc.name, f.name, f.got, f.want)
			}
		}
		for _, l := range Limits {
			if got.BrokersFor[l] != w.BrokersFor[l] {
				t.Errorf("%s: brokers for %s = %d, want %d", tc.name, l, got.BrokersFor[l], w.BrokersFor[l])
			}
		}
		if got.Binding != w.Binding {
			t.Errorf("%s: %s binds, want %s", tc.name, got.Binding, w.Binding)
		}
	}
}

// The parsers take each unit at its meaning: KB decimal, KiB binary, bits divided by 8.
func TestUnits(t *testing.T) {
	for _, tc := range []struct {
		parse func(flag, s string) (float64, error)
		in    string
		want  float64
	}{
		{ParseRate, "1M/s", 1e6}, {ParseRate, "500k/s", 5e5}, {ParseRate, "2K/s", 2e3},
		{ParseRate, "2000/s", 2000}, {ParseRate, "1.5G/s", 1.5e9}, {ParseRate, "0.5/s", 0.5},
		{ParseSize, "1KB", 1000}, {ParseSize, "1kB", 1000}, {ParseSize, "1KiB", 1024},
		{ParseSize, "512B", 512}, {ParseSize, "1.5MB", 1.5e6}, {ParseSize, "2MiB", 2 << 20},
		{ParseSize, "10TB", 1e13}, {ParseSize, "1PiB", 1 << 50},
		{ParseByteRate, "600MB/s", 6e8}, {ParseByteRate, "1GiB/s", 1 << 30},
		{ParseByteRate, "10Gbit/s", 1.25e9}, {ParseByteRate, "25Gbit/s", 3.125e9}, {ParseByteRate, "800Mbit/s", 1e8},
		{ParseDuration, "7d", 604800}, {ParseDuration, "12h", 43200}, {ParseDuration, "30m", 1800},
		{ParseDuration, "90s", 90}, {ParseDuration, "2w", 1209600}, {ParseDuration, "1.5d", 129600},
	} {
		got, err := tc.parse("x", tc.in)
		if err != nil || got != tc.want {
			t.Errorf("%q: got %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// Bad values are refused with the flag, the value, what is wrong and what is expected.
func TestBadValuesNameTheFlagAndWhatIsExpected(t *testing.T) {
	for _, tc := range []struct {
		flag, value string
		want        string
	}{
		{"rate", "-1M/s", `--rate "-1M/s": negative; want messages per second, like 1M/s, 500k/s or 2000/s`},
		{"rate", "0/s", `--rate "0/s": zero; want messages per second`},
		{"rate", "1M", `--rate "1M": no /s at the end; want messages per second`},
		{"rate", "1X/s", `--rate "1X/s": unknown unit "X/s"; want messages per second`},
		{"rate", "1e6/s", `--rate "1e6/s": unknown unit "e6/s"`},
		{"rate", "NaN/s", `--rate "NaN/s": no number at the start`},
		{"rate", "1..2M/s", `--rate "1..2M/s": no number at the start`},
		{"rate", "", `--rate "": no /s at the end`},
		{"size", "1kb", `--size "1kb": unknown unit "kb"; want a size like 1KB, 512B or 1KiB`},
		{"size", "1000", `--size "1000": no unit; want a size like 1KB`},
		{"size", "0.5B", `--size "0.5B": not a whole number of bytes`},
		{"size", "0KB", `--size "0KB": zero`},
		{"size", ".5KB", `--size ".5KB": no number at the start`},
		{"retention", "7", `--retention "7": no unit; want a duration like 7d, 12h, 30m or 90s`},
		{"retention", "7y", `--retention "7y": unknown unit "y"`},
		{"retention", "-1d", `--retention "-1d": negative`},
		{"retention", "Inf", `--retention "Inf": no number at the start`},
		{"rf", "0", `--rf "0": zero; want a whole number, at least 1`},
		{"rf", "-3", `--rf "-3": negative`},
		{"rf", "2.5", `--rf "2.5": not a whole number`},
		{"consumers", "many", `--consumers "many": not a whole number`},
		{"groups", "0", `--groups "0": zero`},
		{"nic", "10Gbps", `--nic "10Gbps": no /s at the end; want a rate like 600MB/s or 1GiB/s (bytes per second) or 10Gbit/s`},
		{"nic", "10Gb/s", `--nic "10Gb/s": unknown unit "Gb/s"`},
		{"disk-rate", "0MB/s", `--disk-rate "0MB/s": zero`},
		{"partition-rate", "-10MB/s", `--partition-rate "-10MB/s": negative`},
		{"cache-window", "0s", `--cache-window "0s": zero`},
		{"disk", "10T", `--disk "10T": unknown unit "T"`},
	} {
		typed := map[string]string{"rate": "1M/s", "size": "1KB", "retention": "7d", tc.flag: tc.value}
		_, err := FromFlags(func(name string) (string, bool) { v, ok := typed[name]; return v, ok })
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("--%s %q: got %v\nwant %s...", tc.flag, tc.value, err, tc.want)
		}
	}
}

// The workload's flags are required; a workload too large for the arithmetic is refused.
func TestMissingAndHugeInputs(t *testing.T) {
	_, err := FromFlags(func(name string) (string, bool) {
		if name == "rate" {
			return "1M/s", true
		}
		return "", false
	})
	if err == nil || err.Error() != "--size is required: bytes per message, e.g. 1KB (1000 B) or 1KiB (1024 B)" {
		t.Errorf("missing --size: %v", err)
	}
	huge := map[string]string{"rate": "1000000G/s", "size": "1000PB", "retention": "1000w"}
	_, err = FromFlags(func(name string) (string, bool) { v, ok := huge[name]; return v, ok })
	if err == nil || !strings.Contains(err.Error(), "more than 10^12") {
		t.Errorf("huge workload: %v", err)
	}
}

// Figures print in decimal units with four significant digits.
func TestNumbersPrint(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{bytes(1.8144e15), "1.814 PB"}, {bytes(9e10), "90 GB"}, {bytes(9e10 / 182), "494.5 MB"},
		{bytes(512), "512 B"}, {bytes(999.96e9), "1 TB"}, {bytes(999.94e9), "999.9 GB"}, {bytes(1024), "1.024 KB"}, {rate(1.25e9), "1.25 GB/s"},
		{bits(1.25e9), "10 Gbit/s"}, {number(1e6), "1,000,000"}, {number(604800), "604,800"},
		{number(0.5), "0.5"}, {number(999), "999"}, {seconds(604800), "604,800 s (7 days)"},
		{seconds(30), "30 s"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
