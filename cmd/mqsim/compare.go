package main

import (
	"github.com/spf13/cobra"

	"mqsim/scenarios/compare"
)

func init() { moreCommands = append(moreCommands, newCompareCmd) }

func newCompareCmd() *cobra.Command {
	var seed uint64
	var scripts bool
	var orders int
	cmd := &cobra.Command{
		Use:   "compare [WORKLOAD]",
		Short: "Run one workload through a Kafka consumer group and share group, RabbitMQ and SQS, and compare them",
		Long: `Run the same workload through a Kafka-style log (3 brokers, a keyed topic, a consumer
group committing after processing), a Kafka share group on the same log (KIP-932: members
sharing partitions, acknowledging each record, a delivery count limit), a RabbitMQ-style queue (3 nodes, a quorum queue,
publisher confirms, competing consumers with manual acks, a dead-letter exchange) and an
SQS-style queue (polling workers, a visibility timeout, a redrive policy to a dead-letter
queue), with the same faults at the same moments, and print what each delivered,
duplicated, lost and reordered per key, the end-to-end latency in virtual time, and what
each design needed. The text under the table restates its figures.

Workloads: ` + compare.Names() + ` (default orders).
--scripts prints the scenario each design ran, with its outputs: run them with 'mqsim run'.`,
		Example: "  mqsim compare\n  mqsim compare calm --seed 7\n  mqsim compare orders --scripts",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := "orders"
			if len(args) == 1 {
				name = args[0]
			}
			w, err := compare.Find(name)
			if err != nil {
				return err
			}
			if orders > 0 {
				w.Orders = orders
			}
			return compare.Run(cmd.OutOrStdout(), w, seed, scripts)
		},
	}
	cmd.Flags().Uint64Var(&seed, "seed", 1, "run seed (the same for every design)")
	cmd.Flags().BoolVar(&scripts, "scripts", false, "also print the scenario transcript each design ran")
	cmd.Flags().IntVar(&orders, "orders", 0, "number of orders (default: the workload's)")
	return cmd
}
