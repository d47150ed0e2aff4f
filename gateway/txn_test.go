package gateway_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"mqsim/gateway"
	"mqsim/model/history"
)

// A kgo transactional producer commits a transaction, aborts the next and commits a
// third through the gateway, with transaction version 2 (mqsim's default: EndTxn v5, the
// leaders adding their partitions) and with version 1 (txn-verification=off:
// AddPartitionsToTxn, EndTxn v4); a read_committed consumer reads exactly the committed
// records, a read_uncommitted one all of them. Each session replays to the same hash.
func TestKgoTransactionsReadCommitted(t *testing.T) {
	if testing.Short() {
		t.Skip("opens sockets and runs a few seconds")
	}
	t.Run("v2", func(t *testing.T) {
		sc, err := gateway.LoadScenario("", 1)
		if err != nil {
			t.Fatal(err)
		}
		testTransactions(t, sc, true)
	})
	t.Run("v1", func(t *testing.T) {
		sc := gateway.Scenario{Name: "txn-v1", Seed: 1,
			Text: "cluster brokers=3 partitions=3 rf=3 min-isr=2 txn-verification=off\n----\n"}
		testTransactions(t, sc, false)
	})
}

func testTransactions(t *testing.T, sc gateway.Scenario, v2 bool) {
	srv, stop, logs := serveScenario(t, 4, sc)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(srv.Addrs()...), kgo.DefaultProduceTopic("t"),
		kgo.TransactionalID("tx-1"), kgo.MetadataMinAge(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	transaction := func(prefix string, commit kgo.TransactionEndTry) []string {
		if err := prod.BeginTransaction(); err != nil {
			t.Fatalf("begin %s: %v", prefix, err)
		}
		var values []string
		for i := range 6 {
			v := fmt.Sprintf("%s-%d", prefix, i)
			values = append(values, v)
			if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatalf("produce %s: %v\nlog:\n%s", v, err, logs)
			}
		}
		if err := prod.EndTransaction(ctx, commit); err != nil {
			t.Fatalf("end %s (commit %v): %v\nlog:\n%s", prefix, commit, err, logs)
		}
		return values
	}
	committed := transaction("committed", kgo.TryCommit)
	aborted := transaction("aborted", kgo.TryAbort)
	committed2 := transaction("again", kgo.TryCommit)
	prod.Close()

	read := func(level kgo.IsolationLevel, want int) []string {
		cons, err := kgo.NewClient(kgo.SeedBrokers(srv.Addrs()...), kgo.ConsumeTopics("t"),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(level),
			kgo.FetchMaxWait(200*time.Millisecond), kgo.MetadataMinAge(50*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		defer cons.Close()
		var got []string
		deadline := time.Now().Add(3 * time.Second)
		for len(got) < want && ctx.Err() == nil {
			pctx, pcancel := context.WithTimeout(ctx, 500*time.Millisecond)
			cons.PollFetches(pctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
			pcancel()
			if time.Now().After(deadline) && len(got) >= want {
				break
			}
		}
		// Wait a little more: a consumer that reads too much shows it now.
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		cons.PollFetches(pctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
		pcancel()
		slices.Sort(got)
		return got
	}
	want := slices.Concat(committed, committed2)
	slices.Sort(want)
	if got := read(kgo.ReadCommitted(), len(want)); !slices.Equal(got, want) {
		t.Fatalf("read_committed read %v\nwant %v\nlog:\n%s", got, want, logs)
	}
	all := slices.Concat(committed, aborted, committed2)
	slices.Sort(all)
	if got := read(kgo.ReadUncommitted(), len(all)); !slices.Equal(got, all) {
		t.Fatalf("read_uncommitted read %v\nwant %v", got, all)
	}

	s := stop()
	// The wire verdict judges the transactions as transactions: the aborted one's
	// records, acknowledged and never read at read_committed, are no lost writes.
	v, err := srv.World().Verdict()
	if err != nil {
		t.Fatal(err)
	}
	if failures, _ := v.Classify(); len(failures) > 0 {
		t.Errorf("the wire verdict of a correct transactional session found %v:\n%s", failures, v.Report)
	}
	// Each transaction is one txn op with its sends: two committed (ok), one aborted
	// (fail); none of their records is a plain send.
	outcomes := map[history.Type]int{}
	for _, op := range srv.World().Runner.Cluster().History.History() {
		switch {
		case op.F == history.Txn && op.Type != history.Invoke:
			outcomes[op.Type]++
			if len(op.Txn.Ops) != 6 {
				t.Errorf("transaction %s did %d sends, want 6", op.Type, len(op.Txn.Ops))
			}
		case op.F == history.Send:
			t.Errorf("a transactional record recorded as a plain send: %+v", op.Send)
		}
	}
	if outcomes[history.Ok] != 2 || outcomes[history.Fail] != 1 || len(outcomes) != 2 {
		t.Errorf("transaction outcomes %v, want 2 ok and 1 fail", outcomes)
	}
	// The client took the path the cluster's transaction version asks for.
	var endVersions []int16
	adds := 0
	for _, a := range s.Arrivals {
		if a.Frame == nil {
			continue
		}
		h, _, err := gateway.ParseRequest(a.Frame)
		if err != nil {
			t.Fatal(err)
		}
		switch kmsg.Key(h.Key) {
		case kmsg.EndTxn:
			endVersions = append(endVersions, h.Version)
		case kmsg.AddPartitionsToTxn:
			adds++
		}
	}
	if len(endVersions) != 3 {
		t.Fatalf("%d EndTxn requests, want 3", len(endVersions))
	}
	if v2 && (slices.Min(endVersions) < 5 || adds > 0) {
		t.Errorf("transaction version 2: EndTxn versions %v and %d AddPartitionsToTxn, want v5 and none", endVersions, adds)
	}
	if !v2 && (slices.Max(endVersions) >= 5 || adds == 0) {
		t.Errorf("transaction version 1: EndTxn versions %v and %d AddPartitionsToTxn, want below v5 and some", endVersions, adds)
	}
	w, err := gateway.Replay(s)
	if err != nil {
		t.Fatal(err)
	}
	if w.Hash() != s.Hash {
		t.Fatalf("replay hash %s, session hash %s", w.Hash(), s.Hash)
	}
}
