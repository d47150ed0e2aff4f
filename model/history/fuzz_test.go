package history

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// FuzzReadJSONLines: whatever the bytes, the reader returns a valid history
// or a *DecodeError naming a line of the input, never panics, and a file
// it accepts (header included) survives writing and reading back unchanged.
func FuzzReadJSONLines(f *testing.F) {
	var doc bytes.Buffer
	if err := WriteJSONLines(&doc, everyKind()); err != nil {
		f.Fatal(err)
	}
	f.Add(doc.Bytes())
	for _, s := range []string{
		"", "\n\n", "{", "[1]", `{"index":0,"index":0}`, `{"system":"queue"}`, "{\"system\":\"log\"}\n{}",
		`{"index":0,"time":1,"process":1,"type":"invoke","f":"poll","value":{}}`,
		`{"index":0,"time":1,"process":1,"type":"invoke","f":"send","value":{"topic":"t","partition":0,"value":"a\ud800"}}`,
		"{\"index\":0,\"time\":1,\"process\":1,\"type\":\"invoke\",\"f\":\"send\",\"value\":{\"topic\":\"t\",\"partition\":0,\"value\":\"a\xff\"}}",
		`{"index":0,"time":1,"process":1,"type":"invoke","f":"poll","value":{"group":"g","share":true}}` + "\n" +
			`{"index":1,"time":2,"process":1,"type":"ok","f":"poll","invoke":0,"value":{"group":"g","share":true,"reads":[{"topic":"t","partition":0,"records":[[0,"a",2]]}]}}`,
		`{"index":0,"time":1,"process":1,"type":"invoke","f":"ack","value":{"topic":"t","partition":0,"group":"g","acks":[[0,"accept"],[1,"release"]]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		f, err := ReadFile(bytes.NewReader(data))
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %v is not a *DecodeError", err)
			}
			if de.Line < 1 || de.Line > bytes.Count(data, []byte{'\n'})+1 {
				t.Fatalf("error names line %d of a %d-line input", de.Line, bytes.Count(data, []byte{'\n'})+1)
			}
			return
		}
		if err := f.Ops.Validate(); err != nil {
			t.Fatalf("accepted an invalid history: %v", err)
		}
		var out strings.Builder
		if err := WriteFile(&out, f); err != nil {
			t.Fatalf("cannot write back an accepted history: %v", err)
		}
		again, err := ReadFile(strings.NewReader(out.String()))
		if err != nil {
			t.Fatalf("cannot read back what was written: %v\n%s", err, out.String())
		}
		var out2 strings.Builder
		WriteFile(&out2, again)
		if out2.String() != out.String() {
			t.Fatalf("round trip changed the history:\n%s\n%s", out.String(), out2.String())
		}
	})
}
