package history

import "testing"

// A share consumer's poll keeps Share (and the delivery counts) through its completion,
// and an ack op repeats its records; a completion that names other records is caught.
func TestShareOpsRecordAndValidate(t *testing.T) {
	r := NewRecorder()
	tp := TopicPartition{Topic: "t", Partition: 0}
	p := r.InvokeSharePoll(1, 0, "g")
	r.Ok(2, p, Result{Reads: []PartitionRecords{{TopicPartition: tp, Records: []Record{{Offset: 4, Value: "v4", DeliveryCount: 2}}}}})
	a := r.InvokeAck(3, 0, "g", tp, []RecordAck{{Offset: 4, Type: "release"}})
	r.Fail(4, a, Result{Error: "INVALID_RECORD_STATE"})
	h := r.History()
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	if !h[1].Poll.Share || h[1].Poll.Reads[0].Records[0].DeliveryCount != 2 {
		t.Errorf("poll completion %+v lost Share or the delivery count", h[1].Poll)
	}
	if h[3].Ack == nil || h[3].Ack.Acks[0] != (RecordAck{Offset: 4, Type: "release"}) || h[3].Type != Fail {
		t.Errorf("ack completion %+v", h[3])
	}
	bad := append(History(nil), h...)
	bad[3].Ack = &AckValue{Group: "g", TopicPartition: tp, Acks: []RecordAck{{Offset: 5, Type: "accept"}}}
	if bad.Validate() == nil {
		t.Error("an ack completion naming other records passed validation")
	}
}
