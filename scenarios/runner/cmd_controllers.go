package runner

import (
	"fmt"
	"strings"

	"mqsim/model/cluster"
	"mqsim/sim"
)

// The controllers of a cluster: `cluster controllers=3` runs a KRaft-style quorum c1..c3;
// `show controllers` prints each one's part.

func init() {
	showSubjects["controllers"] = showControllers
}

func controllerNames(c *cluster.Cluster) []string {
	var names []string
	for _, id := range c.Controllers {
		names = append(names, c.W.Name(id))
	}
	return names
}

// quorumLine is the cluster command's first line for a quorum: "controllers c1 c2 c3 (a
// Raft quorum; c1 is active in term 2)".
func quorumLine(c *cluster.Cluster) string {
	s := "controllers " + strings.Join(controllerNames(c), " ") + " (a Raft quorum"
	if id, ok := c.ActiveController(); ok {
		s += fmt.Sprintf("; %s is active in term %d", c.W.Name(id), c.ControllerNode(id).Status().Term)
	}
	return s + ")"
}

// showControllers prints each controller's part: active or not, its Raft role, term and
// commit index (quorum), and the offset of the metadata it has applied.
func showControllers(r *Runner, a *Args, words []string) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	var lines []string
	for _, id := range c.Controllers {
		name := c.W.Name(id)
		ctl := c.ControllerNode(id)
		if ctl == nil {
			lines = append(lines, fmt.Sprintf("%s: %s", name, c.W.Status(id)))
			continue
		}
		st := ctl.Status()
		if !st.Quorum {
			lines = append(lines, fmt.Sprintf("%s: active, controller epoch %d, metadata v%d", name, st.ControllerEpoch, st.MetadataOffset))
			continue
		}
		role := st.Role.String()
		switch {
		case st.Active:
			role = "leader, active"
		case st.Role.String() == "leader":
			role = "leader, catching up"
		case st.Leader >= 0:
			role += " of " + c.W.Name(st.Leader)
		}
		line := fmt.Sprintf("%s: %s, term %d, commit %d, metadata offset %d", name, role, st.Term, st.Commit, st.MetadataOffset)
		if st.Snapshot > 0 {
			line += fmt.Sprintf(", snapshot at %d", st.Snapshot)
		}
		if st.LastLog > st.Commit {
			line += fmt.Sprintf(", log to %d (uncommitted above %d)", st.LastLog, st.Commit)
		}
		if s := c.W.Status(id); s != sim.Up {
			line += " (" + s.String() + ")"
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n"), nil
}
