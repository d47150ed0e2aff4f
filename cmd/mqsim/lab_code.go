package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"mqsim/labs"
)

// mqsim lab NAME --code DIR: a lab's code is compiled into mqsim, so code kept outside
// the clone gets in through a build: go run -overlay, whose overlay puts the Go files of
// DIR in place of labs/NAME/starter (and hides the starter's other files), runs the same
// mqsim lab on it. The determinism check runs first here, on DIR itself, so that its
// errors name the learner's own files.

// runLabCode checks dir and runs mqsim lab on it in a build of the clone around the
// working directory.
func runLabCode(ctx context.Context, l labs.Lab, dir string, f labFlags) error {
	if f.solution {
		return fmt.Errorf("--code and --solution: choose one (--code runs your code, --solution the reference)")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	problems, err := labs.CheckFS(os.DirFS(dir), dir, "mqsim/labs/"+l.Name)
	if err != nil {
		return fmt.Errorf("--code %s: %w", dir, err)
	}
	if len(problems) > 0 {
		return determinismError(problems)
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	root, err := moduleRoot(wd)
	if err != nil {
		return err
	}
	overlay, err := codeOverlay(root, l.Name, dir)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp("", "mqsim-lab-overlay-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(overlay); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "go", append([]string{"run", "-overlay", tmp.Name(), "./cmd/mqsim"}, labChildArgs(l.Name, f)...)...)
	cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr = root, os.Stdin, os.Stdout, os.Stderr
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return exitError{ee.ExitCode(), fmt.Errorf("lab %s on %s: exit status %d", l.Name, dir, ee.ExitCode())}
	case err != nil:
		return fmt.Errorf("--code builds mqsim with your code, with the go tool: %w", err)
	}
	return nil
}

// labChildArgs are the arguments of the mqsim lab that runs in the build with the code.
func labChildArgs(name string, f labFlags) []string {
	args := []string{"lab", name, "--seeds", strconv.Itoa(f.seeds), "--start", strconv.FormatUint(f.start, 10),
		"--shrink-runs", strconv.Itoa(f.shrinkRuns)}
	if f.out != "" {
		args = append(args, "--out", f.out)
	}
	if f.openTUI {
		args = append(args, "--tui")
	}
	return args
}

// moduleRoot is the directory of the go.mod of module mqsim at or above dir.
func moduleRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if file, err := os.Open(filepath.Join(d, "go.mod")); err == nil {
			sc := bufio.NewScanner(file)
			isMqsim := sc.Scan() && strings.TrimSpace(sc.Text()) == "module mqsim"
			file.Close()
			if isMqsim {
				return d, nil
			}
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("--code builds mqsim with your code: run mqsim lab inside your clone of mqsim (no go.mod of module mqsim at or above %s)", dir)
		}
	}
}

// codeOverlay is the go build overlay (go help build, -overlay) that replaces the lab's
// starter package by the Go files of dir: each of them appears under
// ROOT/labs/NAME/starter, and the starter's own files that dir does not replace are
// hidden (mapped to "").
func codeOverlay(root, name, dir string) ([]byte, error) {
	starter := filepath.Join(root, "labs", name, "starter")
	mine, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	mine = slices.DeleteFunc(mine, func(p string) bool { return strings.HasSuffix(p, "_test.go") })
	if len(mine) == 0 {
		return nil, fmt.Errorf("--code %s: no Go files", dir)
	}
	theirs, err := filepath.Glob(filepath.Join(starter, "*.go"))
	if err != nil {
		return nil, err
	}
	replace := map[string]string{}
	for _, p := range theirs {
		replace[p] = ""
	}
	for _, p := range mine {
		replace[filepath.Join(starter, filepath.Base(p))] = p
	}
	return json.MarshalIndent(struct{ Replace map[string]string }{replace}, "", "  ")
}
