package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"mqsim/estimate"
)

func init() { moreCommands = append(moreCommands, newEstimateCmd) }

func newEstimateCmd() *cobra.Command {
	values := map[string]*estimateValue{}
	cmd := &cobra.Command{
		Use:   "estimate --rate RATE --size SIZE --retention DURATION",
		Short: "Size a Kafka-style cluster on the back of an envelope, each figure with its formula",
		Long: `Estimate what a workload needs: ingress, storage for the retention (times rf),
partitions, brokers (for disk space, disk writes, network in and out) and the page
cache that lets consumers that keep up read from memory. Each figure is printed with
its formula and its numbers, so you can check your own arithmetic; the hardware
assumptions are flags, printed with the figures.

Units: rates 1M/s, 500k/s, 2000/s (k, M, G = 10^3, 10^6, 10^9); sizes 1KB = 1000 B,
1KiB = 1024 B (B, KB, MB, GB, TB, PB and KiB ... PiB); byte rates 600MB/s, or bits
10Gbit/s; durations 7d, 12h, 30m (minutes), 90s, 2w. The output is in decimal units.

Where the defaults come from:
` + defaultSources(),
		Example: "  mqsim estimate --rate 1M/s --size 1KB --retention 7d --rf 3\n" +
			"  mqsim estimate --rate 50k/s --size 2KiB --retention 3d --consumers 24 --groups 3\n" +
			"  mqsim estimate --rate 1M/s --size 1KB --retention 7d --disk 40TB --nic 25Gbit/s",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := estimate.FromFlags(func(name string) (string, bool) {
				return values[name].value, cmd.Flags().Changed(name)
			})
			if err != nil {
				return err
			}
			return estimate.Write(cmd.OutOrStdout(), in, estimate.Compute(in))
		},
	}
	for _, o := range estimate.Options {
		values[o.Name] = &estimateValue{value: o.Default, kind: o.Kind}
		cmd.Flags().Var(values[o.Name], o.Name, o.Usage)
	}
	return cmd
}

// estimateValue is a flag's text as typed, checked by estimate.FromFlags (one parser for
// the command and for the notes' excerpts); kind names the value in the help.
type estimateValue struct{ value, kind string }

func (v *estimateValue) String() string     { return v.value }
func (v *estimateValue) Set(s string) error { v.value = s; return nil }
func (v *estimateValue) Type() string       { return v.kind }

// defaultSources lists each assumption's default and where it comes from, for --help.
func defaultSources() string {
	var b strings.Builder
	for _, o := range estimate.Options {
		if o.Source != "" {
			fmt.Fprintf(&b, "  --%s %s\n%s", o.Name, o.Default, wrapWords(o.Source+".", "      ", 80))
		}
	}
	return b.String()
}
