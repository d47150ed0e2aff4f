package runner

import (
	"slices"
	"strings"
	"testing"

	"mqsim/model/broker"
	"mqsim/model/controller"
	"mqsim/model/proto"
	"mqsim/scenarios/script"
	"mqsim/sim"
)

// execAll runs commands one by one on a fresh runner and returns it with each output;
// it fails the test on an error.
func execAll(t *testing.T, cmds ...string) (*Runner, []string) {
	t.Helper()
	s, err := script.Parse("inline", scriptOf(cmds...))
	if err != nil {
		t.Fatal(err)
	}
	r := NewRunner(Options{})
	var outs []string
	for _, st := range s.Steps {
		out, err := r.Exec(st)
		if err != nil {
			t.Fatalf("%s: %v", st.Cmd, err)
		}
		outs = append(outs, out)
	}
	return r, outs
}

// execErr runs setup, then cmd, and returns cmd's error.
func execErr(t *testing.T, setup []string, cmd string) error {
	t.Helper()
	r, _ := execAll(t, setup...)
	s, err := script.Parse("inline", scriptOf(cmd))
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Exec(s.Steps[0])
	return err
}

const opsCluster = "cluster brokers=3 partitions=1 rf=3 min-isr=2 acks=all flush=never session-timeout=3s heartbeat=1s"

func TestOperatorCommandsRefuseBadArguments(t *testing.T) {
	setup := []string{opsCluster}
	for _, tc := range []struct{ cmd, want string }{
		{"elect t/0", "usage: elect T/P preferred | elect T/P leader=BROKER"},
		{"elect t/0 preferred leader=b2", "usage: elect"},
		{"elect t/9 preferred", "the controller knows no partition t/9"},
		{"elect t/0 leader=b9", `"b9" is not a broker (brokers: b1 b2 b3)`},
		{"elect t/0 leader=ctl", `"ctl" is not a broker`},
		{"reassign t/0", "usage: reassign T/P replicas=(B1, B2, ...)"},
		{"reassign t/0 replicas=(b2, b4)", `"b4" is not a broker`},
		{"reassign t/0 replicas=(b2, b2)", "replicas: b2 is named twice"},
		{"add-broker b7", "the next broker is b4"},
		{"remove-broker b1", "b1 still holds replicas of t/0: reassign them"},
		{"shutdown", "usage: shutdown BROKER"},
		{"kill", "kill: missing node"},
	} {
		err := execErr(t, setup, tc.cmd)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tc.cmd, err, tc.want)
		}
	}
	if err := execErr(t, []string{opsCluster, "crash b1"}, "shutdown b1"); err == nil || !strings.Contains(err.Error(), "b1 is down; only a running broker can shut down") {
		t.Errorf("shutdown of a crashed broker: err = %v", err)
	}
}

// An operator's election moves the leadership to an in-sync replica without fencing the
// old leader (it follows in the new epoch), and refuses a replica outside the ISR.
func TestElectMovesLeadershipWithoutFencing(t *testing.T) {
	r, outs := execAll(t, opsCluster, "produce value=a", "elect t/0 leader=b3", "run for=2s", "partition b2 | b1 b3 ctl", "run for=20s", "elect t/0 leader=b2")
	want := "ctl election: t/0: b3 leads in epoch 1, ISR [b1 b2 b3] (an operator asked for it)"
	if !strings.Contains(outs[2], want) || !strings.Contains(outs[2], "b1 follower: t/0: follows b3 in epoch 1") {
		t.Errorf("elect output:\n%s\nwant %q and b1 following", outs[2], want)
	}
	for _, e := range r.World().Trace().Events() {
		if d, ok := e.Data.(controller.BrokerFenced); ok && d.Broker == "b1" {
			t.Errorf("b1 was fenced: %s", e)
		}
	}
	if !strings.Contains(outs[6], "not electing b2: ELIGIBLE_LEADERS_NOT_AVAILABLE") {
		t.Errorf("electing a replica outside the ISR: %q", outs[6])
	}
}

// A controlled shutdown elects before the broker stops, takes it out of the ISR, and
// stops it with nothing unsynced; a crash leaves the partition leaderless for a session
// timeout and loses the unsynced tail.
func TestControlledShutdownVersusCrash(t *testing.T) {
	r, outs := execAll(t, opsCluster, "produce values=(a, b)", "shutdown b1")
	w := r.World()
	var asked, elected, granted sim.Time = -1, -1, -1
	for _, e := range w.Trace().Events() {
		switch d := e.Data.(type) {
		case sim.NodeKilled:
			if d.Unsynced != 0 {
				t.Errorf("b1 stopped with %dB unsynced", d.Unsynced)
			}
		case controller.LeaderElected:
			if d.Why.Kind == controller.ShuttingDown {
				elected = e.Time
			}
		case broker.ShutdownAsked:
			asked = e.Time
		case controller.ShutdownGranted:
			granted = e.Time
		}
	}
	// The leadership moves at once, while b1 still runs; the grant waits for the other
	// brokers to report the new metadata (a heartbeat later).
	if asked < 0 || elected < asked || elected.Sub(asked) > 10_000_000 || granted <= elected {
		t.Errorf("asked at %s, new leader at %s, granted at %s: want the election within 10ms and before the grant\n%s", asked, elected, granted, outs[2])
	}
	if p := r.Cluster().Partitions()[0]; w.Name(p.Leader) == "b1" || slices.Contains(p.ISR, p.Leader) == false || len(p.ISR) != 2 {
		t.Errorf("after shutdown: %+v", p)
	}

	_, outs = execAll(t, opsCluster, "produce values=(a, b)", "crash b1", "run for=5s", "trace kinds=(election)")
	if !strings.Contains(outs[2], "lost") {
		t.Errorf("crash with flush=never lost nothing: %q", outs[2])
	}
	if !strings.Contains(outs[4], "3.5s ctl election") {
		t.Errorf("after a crash the election waits for the session timeout: %q", outs[4])
	}
}

// A reassignment's intermediate state is the target followed by the removed replicas,
// with adding and removing recorded and the ISR unchanged; a new replica that cannot
// catch up keeps it there, and once it does the old replica goes.
func TestReassignmentWaitsForTheNewReplica(t *testing.T) {
	r, outs := execAll(t, opsCluster, "produce values=(a, b)", "add-broker b4", "partition b4 | b1 b2 b3 ctl", "reassign t/0 replicas=(b2, b3, b4)")
	if !strings.Contains(outs[4], "still in progress") {
		t.Errorf("reassign with b4 cut off:\n%s", outs[4])
	}
	names := func(ids []sim.NodeID) string { return idNames(r.World(), ids) }
	p := r.Cluster().Partitions()[0]
	if got := names(p.Replicas) + names(p.AddingReplicas) + names(p.RemovingReplicas) + names(p.ISR); got != "[b2 b3 b4 b1][b4][b1][b1 b2 b3]" {
		t.Errorf("during the reassignment: replicas, adding, removing, ISR = %s", got)
	}
	if p.Leader == proto.NoLeader || r.World().Name(p.Leader) != "b1" {
		t.Errorf("leader during the reassignment: %v", p.Leader)
	}
	s, _ := script.Parse("inline", scriptOf("heal", "run for=5s", "produce value=c", "consume from=earliest", "check"))
	for _, st := range s.Steps {
		if _, err := r.Exec(st); err != nil {
			t.Fatal(err)
		}
	}
	p = r.Cluster().Partitions()[0]
	if got := names(p.Replicas) + names(p.ISR); got != "[b2 b3 b4][b2 b3 b4]" || len(p.AddingReplicas)+len(p.RemovingReplicas) != 0 {
		t.Errorf("after the reassignment: replicas, ISR = %s (%+v)", got, p)
	}
	if rep := lastReport(t, r); len(rep.Violations) != 0 {
		t.Errorf("violations:\n%s", rep)
	}
}

// With auto-leader-rebalance the controller gives a partition back to its preferred
// replica by itself once that replica is back in the ISR; without it the leadership stays.
func TestAutoLeaderRebalance(t *testing.T) {
	for _, tc := range []struct {
		setting, want string
	}{
		{"", "b2"},
		{" auto-leader-rebalance=5s", "b1"},
	} {
		r, _ := execAll(t, opsCluster+tc.setting, "produce value=a", "crash b1", "run for=5s", "restart b1", "run for=20s")
		p := r.Cluster().Partitions()[0]
		if got := r.World().Name(p.Leader); got != tc.want {
			t.Errorf("cluster%s: t/0 led by %s after b1 returned, want %s", tc.setting, got, tc.want)
		}
	}
}

// With flush=never a broker's log lives in the page cache: a killed broker restarts with
// all of it, a crashed one (power loss) with none of it.
func TestKillKeepsTheLogCrashLosesIt(t *testing.T) {
	for _, tc := range []struct {
		fault, want string
	}{
		{"kill b3", "b3 t/0: log [0,2), HW 0, on disk below 0"},
		{"crash b3", "b3 t/0: log [0,0), HW 0, on disk below 0"},
	} {
		// b3 is cut off from the leader after it restarts, so what it shows is what its
		// own disk kept, not what it fetched again.
		_, outs := execAll(t, opsCluster, "produce values=(a, b)", "run for=100ms", tc.fault, "cut b1 <-> b3", "cut b2 <-> b3", "restart b3", "run for=1s", "show log b3")
		if got := outs[len(outs)-1]; !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s, restart: %q, want %q", tc.fault, got, tc.want)
		}
	}
}
