package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yannh/kubeconform/pkg/validator"
	"go.yaml.in/yaml/v3"
)

// The files that run the swarm beyond one machine: .github/workflows/swarm.yml (a GitHub
// Actions matrix), deploy/swarm-job.yaml (a Kubernetes Indexed Job) and the Dockerfile
// the Job's image is built from.
const (
	workflowFile = "../../.github/workflows/swarm.yml"
	jobFile      = "../../deploy/swarm-job.yaml"
)

// swarmArgs parses a swarm command line with the real command's flags, and returns the
// seeds it plans.
func swarmArgs(t *testing.T, args []string) swarmPlan {
	t.Helper()
	cmd := newSwarmCmd()
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatalf("mqsim swarm refuses %q: %v", args, err)
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		t.Fatalf("mqsim swarm refuses %q: %v", args, err)
	}
	fl := cmd.Flags()
	start, _ := fl.GetUint64("start")
	seeds, _ := fl.GetInt("seeds")
	shard, _ := fl.GetString("shard")
	i, n, err := parseShard(shard)
	if err != nil {
		t.Fatal(err)
	}
	return swarmPlan{Start: start, Count: seeds, Shard: i, Shards: n}
}

// coverage checks, with the merge command's own accounting, that the plans cover seeds
// start..start+count-1 exactly once.
func coverage(t *testing.T, plans []swarmPlan, start uint64, count int) {
	t.Helper()
	var shards []shardSummary
	for i, p := range plans {
		n := shardSize(p.Count, p.Shard, p.Shards)
		shards = append(shards, shardSummary{path: fmt.Sprintf("shard %d", i), sum: swarmSummary{Profile: "safe", Plan: p, Seeds: n, Runs: n}})
	}
	_, problems, err := mergeShards(shards, &swarmPlan{Start: start, Count: count, Shards: 1})
	if err != nil || len(problems) > 0 {
		t.Errorf("the shards do not cover seeds %d..%d once: %v %v", start, start+uint64(count)-1, err, problems)
	}
}

type workflow struct {
	Env  map[string]string `yaml:"env"`
	Jobs map[string]struct {
		Needs    any    `yaml:"needs"`
		If       string `yaml:"if"`
		Strategy struct {
			Matrix struct {
				Include []struct {
					Shard int    `yaml:"shard"`
					Start uint64 `yaml:"start"`
				} `yaml:"include"`
			} `yaml:"matrix"`
		} `yaml:"strategy"`
		Steps []struct {
			Name string            `yaml:"name"`
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			With map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// expand replaces the workflow's ${{ matrix.X }} and "$ENV" references with their values
// and splits the command line into words (the run lines quote nothing else).
func expand(line string, vars map[string]string) []string {
	for k, v := range vars {
		line = strings.ReplaceAll(line, `"${{ `+k+` }}"`, v)
		line = strings.ReplaceAll(line, "${{ "+k+" }}", v)
		line = strings.ReplaceAll(line, `"$`+k+`"`, v)
	}
	return strings.Fields(line)
}

// The workflow's shards together run every seed of SWARM_START..SWARM_SEEDS once, each
// writes the summary it uploads, and the merge job checks the same range.
func TestSwarmWorkflowCoversEverySeedOnce(t *testing.T) {
	data, err := os.ReadFile(workflowFile)
	if err != nil {
		t.Fatal(err)
	}
	var wf workflow
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&wf); err != nil {
		t.Fatalf("%s: %v", workflowFile, err)
	}
	var total, perShard int
	var first uint64
	for k, dst := range map[string]any{"SWARM_SEEDS": &total, "SEEDS_PER_SHARD": &perShard, "SWARM_START": &first} {
		if _, err := fmt.Sscan(wf.Env[k], dst); err != nil {
			t.Fatalf("env %s = %q: %v", k, wf.Env[k], err)
		}
	}
	shard, merge := wf.Jobs["shard"], wf.Jobs["merge"]
	include := shard.Strategy.Matrix.Include
	if len(include) == 0 {
		t.Fatal("the shard job has no matrix")
	}
	var swarmLine, upload string
	for _, s := range shard.Steps {
		if strings.Contains(s.Run, " swarm ") {
			swarmLine = s.Run
		}
		if strings.HasPrefix(s.Uses, "actions/upload-artifact") {
			upload = s.With["path"]
		}
	}
	var plans []swarmPlan
	for i, m := range include {
		if m.Shard != i {
			t.Errorf("matrix entry %d is shard %d", i, m.Shard)
		}
		vars := map[string]string{"matrix.shard": fmt.Sprint(m.Shard), "matrix.start": fmt.Sprint(m.Start),
			"SEEDS_PER_SHARD": wf.Env["SEEDS_PER_SHARD"]}
		words := expand(swarmLine, vars)
		if len(words) < 2 || words[1] != "swarm" {
			t.Fatalf("the swarm step runs %q", swarmLine)
		}
		p := swarmArgs(t, words[2:])
		plans = append(plans, p)
		cmd := newSwarmCmd()
		cmd.ParseFlags(words[2:])
		jsonOut, _ := cmd.Flags().GetString("json")
		if want := fmt.Sprintf("%s/shard-%d.json", upload, m.Shard); jsonOut != want {
			t.Errorf("shard %d writes its summary to %q, want %q (in the uploaded %s)", m.Shard, jsonOut, want, upload)
		}
	}
	coverage(t, plans, first, total)
	if perShard*len(include) != total {
		t.Errorf("%d shards of %d seeds are not the %d seeds of SWARM_SEEDS", len(include), perShard, total)
	}

	if merge.Needs != "shard" || merge.If != "always()" {
		t.Errorf("the merge job needs %v if %q: want it after every shard, failed or not", merge.Needs, merge.If)
	}
	var merged bool
	for _, s := range merge.Steps {
		words := expand(s.Run, map[string]string{"SWARM_START": wf.Env["SWARM_START"], "SWARM_SEEDS": wf.Env["SWARM_SEEDS"]})
		if len(words) < 5 || strings.Join(words[:5], " ") != "go run ./cmd/mqsim swarm merge" {
			continue
		}
		merged = true
		cmd := newSwarmMergeCmd()
		if err := cmd.ParseFlags(words[5:]); err != nil {
			t.Fatal(err)
		}
		start, _ := cmd.Flags().GetUint64("start")
		seeds, _ := cmd.Flags().GetInt("seeds")
		if start != first || seeds != total {
			t.Errorf("the merge checks seeds %d..+%d, want %d..+%d", start, seeds, first, total)
		}
	}
	if !merged {
		t.Error("the merge job does not run mqsim swarm merge")
	}
}

// k8sSchemas writes strict JSON schemas for the kinds the Job manifest uses into a
// temporary directory laid out as kubeconform's -schema-location template expects. They
// are made from the Kubernetes definitions that the pinned kubeconform module ships
// (fixtures/cache, its cached copy of the kubernetes-json-schema registry's
// _definitions.json): nothing is downloaded. Strict, as kubeconform's own -strict
// schemas are made (openapi2jsonschema --strict): every object with properties refuses
// any other.
func k8sSchemas(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/yannh/kubeconform").Output()
	if err != nil {
		t.Fatalf("locating the kubeconform module: %v", err)
	}
	const definitions = "fixtures/cache/6dc6142c64b944d783a3e783526114da8e747a14a11d8b32dd1f12e2d89a8330"
	data, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), definitions))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Definitions map[string]map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for _, d := range doc.Definitions {
		if _, ok := d["properties"]; ok {
			if _, set := d["additionalProperties"]; !set {
				d["additionalProperties"] = false
			}
		}
	}
	dir := t.TempDir()
	for file, def := range map[string]string{
		"job-batch-v1.json":             "io.k8s.api.batch.v1.Job",
		"persistentvolumeclaim-v1.json": "io.k8s.api.core.v1.PersistentVolumeClaim",
	} {
		if doc.Definitions[def] == nil {
			t.Fatalf("no %s in the definitions", def)
		}
		schema, _ := json.Marshal(map[string]any{"$ref": "#/definitions/" + def, "definitions": doc.Definitions})
		if err := os.WriteFile(filepath.Join(dir, file), schema, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// kubeconform validates the manifest strictly against the Kubernetes schemas, and proves
// that it would catch a mistake: the same manifest with a misspelt field fails.
func TestSwarmJobManifest(t *testing.T) {
	data, err := os.ReadFile(jobFile)
	if err != nil {
		t.Fatal(err)
	}
	v, err := validator.New([]string{filepath.Join(k8sSchemas(t), "{{ .ResourceKind }}{{ .KindSuffix }}.json")},
		validator.Opts{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	validate := func(data []byte) (valid int, errs []string) {
		for _, r := range v.Validate(jobFile, io.NopCloser(bytes.NewReader(data))) {
			switch r.Status {
			case validator.Valid:
				valid++
			default:
				errs = append(errs, fmt.Sprintf("%v: %v %v", r.Status, r.Err, r.ValidationErrors))
			}
		}
		return valid, errs
	}
	if valid, errs := validate(data); valid != 2 || len(errs) > 0 {
		t.Fatalf("%s: %d valid resources, want 2; %v", jobFile, valid, errs)
	}
	misspelt := bytes.Replace(data, []byte("completionMode:"), []byte("completionmode:"), 1)
	if _, errs := validate(misspelt); len(errs) == 0 {
		t.Error("a misspelt field passes: the validation is not strict")
	}

	// The Job's pods: index I runs shard I/N of the range, and the N indexes cover it once.
	var job struct {
		Kind string `yaml:"kind"`
		Spec struct {
			CompletionMode string `yaml:"completionMode"`
			Completions    int    `yaml:"completions"`
			Template       struct {
				Spec struct {
					Containers []struct {
						Args []string `yaml:"args"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for dec.Decode(&job) == nil && job.Kind != "Job" {
	}
	if job.Spec.CompletionMode != "Indexed" || len(job.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("want an Indexed Job with one container: %+v", job.Spec)
	}
	args := job.Spec.Template.Spec.Containers[0].Args
	var plans []swarmPlan
	for i := 0; i < job.Spec.Completions; i++ {
		var expanded []string
		for _, a := range args {
			expanded = append(expanded, strings.ReplaceAll(a, "$(JOB_COMPLETION_INDEX)", fmt.Sprint(i)))
		}
		if len(expanded) == 0 || expanded[0] != "swarm" {
			t.Fatalf("the container runs %q, want mqsim swarm", args)
		}
		p := swarmArgs(t, expanded[1:])
		if p.Shard != i || p.Shards != job.Spec.Completions {
			t.Errorf("index %d runs shard %d/%d, want %d/%d", i, p.Shard, p.Shards, i, job.Spec.Completions)
		}
		plans = append(plans, p)
	}
	coverage(t, plans, plans[0].Start, plans[0].Count)
}
