package controller

import (
	"encoding/json"
	"slices"
	"strings"

	"mqsim/model/proto"
	"mqsim/sim"
)

// metadataLog is where the controller's decisions go before anyone hears of them: the
// single controller's file (fileLog) or the quorum's Raft log (quorum). The controller
// applies a batch of records to its state, appends it here, and sends what depends on it
// once done has passed end.
type metadataLog interface {
	// append records a batch already applied to st and sets st.Version to its position.
	// It reports false when the batch could not be appended (the quorum's leader is
	// refusing proposals): st then holds a change nobody will learn of.
	append(env *sim.Env, st *state, recs []record) bool
	// end is the position after the last append.
	end() int64
	// done is the position up to which appends are durable (file) or committed (quorum).
	done(env *sim.Env) int64
}

const logFile = "controller/metadata.log"

// fileLog is the single controller's persistence: an append-only file of JSON lines,
// each the whole metadata image after a change, fsynced before anyone hears of it. The
// image leaves out liveness (state.Fenced): a single controller that restarts gives every
// broker a new session, as ZooKeeper-era controllers re-read live brokers at failover.
type fileLog struct {
	written int64 // file size after the last append
}

// image is what one line of the file holds: the state without liveness.
type image struct {
	ControllerEpoch int32
	Version         int64
	NextProducerID  int64
	Topics          []proto.TopicConfig
	Partitions      []proto.PartitionState
	Incarnations    []int64
}

// append writes the image unless the batch changes only liveness, which the image does
// not hold. An empty batch writes too: the controller epoch bump at start.
func (l *fileLog) append(env *sim.Env, st *state, recs []record) bool {
	if len(recs) > 0 && !slices.ContainsFunc(recs, func(r record) bool { return r.Fence == nil }) {
		return true
	}
	st.Version++
	line, err := json.Marshal(image{st.ControllerEpoch, st.Version, st.NextProducerID, st.Topics, st.Partitions, st.Incarnations})
	if err != nil {
		panic(err) // plain data always encodes
	}
	env.Disk().Append(logFile, append(line, '\n'))
	l.written = env.Disk().Size(logFile)
	env.Fsync(logFile)
	return true
}

func (l *fileLog) end() int64 { return l.written }

func (l *fileLog) done(env *sim.Env) int64 { return env.Disk().SyncedSize(logFile) }

// recover reads the last complete line of the file into a state for n brokers, cutting a
// torn last line.
func (l *fileLog) recover(env *sim.Env, n int) *state {
	st := newState(n, false)
	data := env.Disk().ReadAll(logFile)
	l.written = int64(len(data))
	end := strings.LastIndexByte(string(data), '\n')
	if end < 0 {
		return st
	}
	if int64(end+1) < l.written {
		env.Disk().Truncate(logFile, int64(end+1)) // a torn last line
		l.written = int64(end + 1)
	}
	lines := strings.Split(string(data[:end]), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		var img image
		if json.Unmarshal([]byte(lines[i]), &img) == nil {
			s := &state{ControllerEpoch: img.ControllerEpoch, Version: img.Version, NextProducerID: img.NextProducerID,
				Topics: img.Topics, Partitions: img.Partitions, Incarnations: img.Incarnations, Fenced: make([]bool, n)}
			if len(s.Incarnations) != n {
				s.Incarnations = make([]int64, n)
			}
			return s
		}
	}
	return st
}
