package history

import (
	"bytes"
	"strings"
	"testing"
)

// The package documentation's share poll and ack value objects must stay exactly what
// the encoder writes.
func TestDocShareValues(t *testing.T) {
	r := NewRecorder()
	p := r.InvokeSharePoll(1, 1, "g")
	r.Ok(2, p, Result{Reads: []PartitionRecords{{TopicPartition: t0, Records: []Record{{Offset: 7, Value: "v", DeliveryCount: 1}, {Offset: 9, Value: "x", DeliveryCount: 3}}}}})
	a := r.InvokeAck(3, 1, "g", t0, []RecordAck{{Offset: 7, Type: AckAccept}, {Offset: 9, Type: AckRelease}})
	r.Ok(4, a, Result{})
	var buf bytes.Buffer
	if err := WriteJSONLines(&buf, r.History()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	for i, want := range map[int]string{
		1: `"value":{"group":"g","share":true,"reads":[{"topic":"t","partition":0,"records":[[7,"v",1],[9,"x",3]]}]}`,
		3: `"value":{"topic":"t","partition":0,"group":"g","acks":[[7,"accept"],[9,"release"]]}`,
	} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("line %d is %s\nwant its value %s, as the documentation says", i, lines[i], want)
		}
	}
}
