package scenarios

import (
	"fmt"
	"os"
	"testing"

	"mqsim/scenarios/runner"
	"mqsim/scenarios/script"
)

func runScaleFile(tb testing.TB, path string) *runner.Result {
	text, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := script.Parse(path, string(text))
	if err != nil {
		tb.Fatal(err)
	}
	res, err := runner.Run(s, runner.Options{}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return res
}

func BenchmarkScaleFile(b *testing.B) {
	path := os.Getenv("MQSIM_SCALE_FILE")
	if path == "" {
		b.Skip("MQSIM_SCALE_FILE not set")
	}
	for i := 0; i < b.N; i++ {
		res := runScaleFile(b, path)
		fmt.Println(res.Hash, res.Violations)
	}
}
