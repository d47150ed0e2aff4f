package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func run(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRoot(&out, &errb)
	root.SetArgs(args)
	err = root.Execute()
	return out.String(), errb.String(), err
}

func TestRunCatalogScenarioPrintsTranscriptAndHash(t *testing.T) {
	out, _, err := run(t, "run", "kernel-pingpong")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "crash s1\n----\n") || !strings.Contains(out, "\ntrace-hash: ") {
		t.Errorf("transcript missing parts:\n%s", out)
	}
	hash := out[strings.LastIndex(out, "trace-hash: ")+12:]
	if len(strings.TrimSpace(hash)) != 16 {
		t.Errorf("hash %q is not 16 hex digits", hash)
	}
	again, _, _ := run(t, "run", "kernel-pingpong", "-q")
	if !strings.HasSuffix(again, hash) {
		t.Errorf("quiet rerun gave %q, want hash %q", again, hash)
	}
	other, _, _ := run(t, "run", "kernel-pingpong", "-q", "--seed", "2")
	if strings.HasSuffix(other, hash) {
		t.Errorf("seed 2 gave the same hash as seed 1")
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("world\n----\n\nrun for=soon\n----\n"), 0o644)
	unknown := filepath.Join(dir, "unknown.txt")
	os.WriteFile(unknown, []byte("# x\nfrobnicate\n----\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", filepath.Join(dir, "missing.txt")}, `no scenario file or catalogue entry named`},
		{[]string{"run", bad}, "bad.txt:4: run: for=: bad duration \"soon\""},
		{[]string{"run", unknown}, "unknown.txt:2: unknown command \"frobnicate\""},
		{[]string{"run"}, "accepts 1 arg(s), received 0"},
		{[]string{"run", "x", "--frob"}, "unknown flag: --frob"},
	} {
		_, _, err := run(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.args, err, tc.want)
		}
	}
}

func TestListShowsCatalog(t *testing.T) {
	out, _, err := run(t, "list")
	if err != nil || !strings.Contains(out, "kernel-pingpong") {
		t.Errorf("list: %v\n%s", err, out)
	}
}

func TestCommandsAndBugsList(t *testing.T) {
	out, _, err := run(t, "commands")
	if err != nil || !strings.Contains(out, "run for=D | until=TIME | steps=N") || !strings.Contains(out, "min-isr") {
		t.Errorf("commands: %v\n%s", err, out)
	}
	out, _, err = run(t, "bugs")
	if err != nil || !strings.Contains(out, "hw-from-leader-only") {
		t.Errorf("bugs: %v\n%s", err, out)
	}
}
