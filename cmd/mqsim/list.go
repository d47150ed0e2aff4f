package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"mqsim/scenarios"
)

// listWidth is the width mqsim list fits in: a terminal's, or a projected slide's.
const listWidth = 80

// startHere are the scenarios a newcomer should open first, in order: the log cluster's
// flagship, consumer groups, and a queue broker.
var startHere = []string{"acks1-leader-crash", "rebalance-duplicates", "rabbit-quorum-leader-crash"}

// listTopic is a heading of mqsim list and the tags that put a scenario under it; a
// scenario goes under the first topic one of its tags names, else under the last.
type listTopic struct {
	title string
	tags  []string
}

var listTopics = []listTopic{
	{"Planted bugs: the checkers catch a deliberate mistake", []string{"planted-bug"}},
	{"Queue brokers: RabbitMQ and SQS", []string{"rabbitmq", "sqs"}},
	{"Transactions and exactly-once", []string{"transactions", "pipeline"}},
	{"Consumers and consumer groups", []string{"consumer-group", "consumer-groups", "consumer"}},
	{"Producers: acks, retries, idempotence", []string{"producer"}},
	{"The controller quorum (KRaft)", []string{"controller"}},
	{"Kafka's history: bugs of past releases", []string{"legacy"}},
	{"Replication, leaders and the log", nil},
}

func newListCmd() *cobra.Command {
	var long bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the built-in scenarios, by topic",
		Long: `List the built-in scenarios by topic, the first ones to open at the top, each with
its description. --long adds each scenario's tags.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			writeList(cmd.OutOrStdout(), scenarios.Catalog(), long)
			return nil
		},
	}
	cmd.Flags().BoolVarP(&long, "long", "l", false, "add each scenario's tags")
	return cmd
}

// writeList writes the catalogue under its topics, "Start here" first: each scenario's
// name, then its description wrapped within listWidth columns (and, long, its tags).
func writeList(w io.Writer, catalog []scenarios.Entry, long bool) {
	byName := map[string]scenarios.Entry{}
	for _, e := range catalog {
		byName[e.Name] = e
	}
	sections := make([][]scenarios.Entry, len(listTopics))
	for _, e := range catalog {
		if slices.Contains(startHere, e.Name) {
			continue
		}
		t := slices.IndexFunc(listTopics, func(t listTopic) bool {
			return t.tags == nil || slices.ContainsFunc(e.Tags, func(tag string) bool { return slices.Contains(t.tags, tag) })
		})
		sections[t] = append(sections[t], e)
	}
	var first []scenarios.Entry
	for _, n := range startHere {
		if e, ok := byName[n]; ok {
			first = append(first, e)
		}
	}
	section := func(title string, es []scenarios.Entry) {
		if len(es) == 0 {
			return
		}
		fmt.Fprintf(w, "%s\n", title)
		for _, e := range es {
			fmt.Fprintf(w, "  %s\n%s", e.Name, wrapWords(e.Description, "      ", listWidth))
			if long {
				fmt.Fprintf(w, "%s", wrapWords("tags: "+strings.Join(e.Tags, ", "), "      ", listWidth))
			}
		}
		fmt.Fprintln(w)
	}
	section("Start here: mqsim tui NAME steps through one, mqsim run NAME prints it", first)
	for i, t := range listTopics {
		section(t.title, sections[i])
	}
}

// wrapWords wraps s at words into lines of at most width columns, each behind indent.
func wrapWords(s, indent string, width int) string {
	var b strings.Builder
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && utf8.RuneCountInString(indent+line+" "+word) > width {
			b.WriteString(indent + line + "\n")
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		b.WriteString(indent + line + "\n")
	}
	return b.String()
}
