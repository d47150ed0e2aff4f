package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"mqsim/internal/benchhistory"
	"mqsim/model/history"
)

// BenchmarkCheckFile times mqsim check from the file to the verdict
// (reading, every checker, linearizability included) on the benchmarks'
// large valid history, beside a baseline measured in the same run: reading
// the same file line by line with the standard library's encoding/json into
// structs of the same shape, and nothing else. Set MQSIM_CHECK_BENCH_OPS
// (make bench sets 500000: about 10^6 lines, 140 MB, 4 partitions);
// unset, the benchmark is skipped, since it takes seconds per run.
func BenchmarkCheckFile(b *testing.B) {
	ops, err := strconv.Atoi(os.Getenv("MQSIM_CHECK_BENCH_OPS"))
	if err != nil || ops <= 0 {
		b.Skip("set MQSIM_CHECK_BENCH_OPS to the operations of the history, e.g. 500000")
	}
	path := filepath.Join(b.TempDir(), "big.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := history.WriteJSONLines(f, benchhistory.Build(ops, 4)); err != nil {
		b.Fatal(err)
	}
	f.Close()
	var base, check time.Duration
	b.Run("baseline-encoding-json", func(b *testing.B) {
		for b.Loop() {
			start := time.Now()
			if err := readWithEncodingJSON(path); err != nil {
				b.Fatal(err)
			}
			base += time.Since(start)
		}
		base /= time.Duration(b.N)
	})
	b.Run("mqsim-check", func(b *testing.B) {
		for b.Loop() {
			start := time.Now()
			root := newRoot(&bytes.Buffer{}, &bytes.Buffer{})
			root.SetArgs([]string{"check", path})
			if err := root.Execute(); err != nil {
				b.Fatal(err)
			}
			check += time.Since(start)
		}
		check /= time.Duration(b.N)
		b.ReportMetric(float64(check)/float64(base), "x-baseline")
	})
}

// readWithEncodingJSON is the baseline: the standard decoder, one line at a
// time, into structs shaped like the format; no validation, no checking.
func readWithEncodingJSON(path string) error {
	type wire struct {
		Index, Process, Invoke int
		Time                   int64
		Type, F, Error         string
		Value                  struct {
			Topic, Key, Value, Group string
			Partition                int32
			Offset                   int64
			Reads                    []struct {
				Topic     string
				Partition int32
				Records   [][2]any
			}
		}
	}
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	var ops []wire
	for sc.Scan() {
		var w wire
		if err := json.Unmarshal(sc.Bytes(), &w); err != nil {
			return err
		}
		ops = append(ops, w)
	}
	if len(ops) == 0 {
		return errors.New("baseline read no ops")
	}
	return sc.Err()
}
