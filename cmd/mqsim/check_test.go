package main

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"mqsim/internal/benchhistory"
	"mqsim/model/history"
)

// Decoding in parts gives the history and the errors of the one reader,
// wherever the cuts fall: between blank lines, inside a run of them, on
// the line with the error.
func TestDecodeParallelMatchesReadJSONLines(t *testing.T) {
	var doc strings.Builder
	if err := history.WriteJSONLines(&doc, benchhistory.Build(20, 2)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(doc.String(), "\n"), "\n")
	withBlanks := "\n" + strings.Join(lines[:2], "\n\n\n") + "\n" + strings.Join(lines[2:], "\n") + "\n\n"
	last := len(lines) - 1
	broken := strings.Replace(withBlanks, fmt.Sprintf(`"index":%d`, last), fmt.Sprintf(`"index":%d,"index":1`, last), 1)
	badOrder := strings.Replace(withBlanks, fmt.Sprintf(`"index":%d`, last), `"index":1`, 1)
	header := `{"system":"log"}` + "\n"
	late := withBlanks + header
	for _, input := range []string{withBlanks, broken, badOrder, "", header + withBlanks, "\n" + header + header + withBlanks, late} {
		want, wantErr := history.ReadFile(strings.NewReader(input))
		for n := 1; n <= 5; n++ {
			got, err := decodeParallel([]byte(input), n)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) || got.System != want.System ||
				!reflect.DeepEqual(got.Ops, want.Ops) && len(want.Ops)+len(got.Ops) > 0 {
				t.Fatalf("%d parts: got %v, %v\nwant %v, %v", n, got, err, want, wantErr)
			}
		}
	}
}
