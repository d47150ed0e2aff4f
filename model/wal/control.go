package wal

import (
	"encoding/binary"
	"fmt"
)

// Control batches: the COMMIT and ABORT markers a transaction coordinator has each
// partition leader append when a transaction ends (Kafka's EndTransactionMarker). A
// control batch has FlagControl|FlagTransactional, the transaction's producer id and
// epoch, no sequence, and exactly one record, whose key is the control type and whose
// value is the coordinator epoch, laid out as Kafka lays them out:
//
//	key:   version int16 (0), type int16 (ABORT=0, COMMIT=1)
//	value: version int16 (0), coordinator epoch int32

// ControlType is a control record's type (Kafka's ControlRecordType).
type ControlType int16

const (
	ControlAbort  ControlType = 0
	ControlCommit ControlType = 1
)

func (t ControlType) String() string {
	switch t {
	case ControlAbort:
		return "ABORT"
	case ControlCommit:
		return "COMMIT"
	}
	return fmt.Sprintf("control type %d", int16(t))
}

// Marker is the content of a transaction marker's one record.
type Marker struct {
	Type ControlType
	// CoordinatorEpoch is the leader epoch of the coordinator's __transaction_state
	// partition: a leader refuses a marker from an older coordinator than the last one
	// that wrote to this producer.
	CoordinatorEpoch int32
}

const (
	controlKeySize   = 4
	controlValueSize = 6
)

// EncodeMarker is the record of a transaction marker.
func EncodeMarker(m Marker) Record {
	key := make([]byte, controlKeySize)
	binary.BigEndian.PutUint16(key[2:], uint16(m.Type))
	value := make([]byte, controlValueSize)
	binary.BigEndian.PutUint32(value[2:], uint32(m.CoordinatorEpoch))
	return Record{Key: key, Value: value}
}

// DecodeMarker reads a transaction marker's record back; a record that is not one is an
// error that says what was expected.
func DecodeMarker(r Record) (Marker, error) {
	if len(r.Key) != controlKeySize {
		return Marker{}, fmt.Errorf("wal: control record key has %d bytes, want %d (version, type)", len(r.Key), controlKeySize)
	}
	if v := int16(binary.BigEndian.Uint16(r.Key)); v != 0 {
		return Marker{}, fmt.Errorf("wal: control record key version %d, want 0", v)
	}
	t := ControlType(binary.BigEndian.Uint16(r.Key[2:]))
	if t != ControlAbort && t != ControlCommit {
		return Marker{}, fmt.Errorf("wal: control record type %d, want ABORT (0) or COMMIT (1)", int16(t))
	}
	if len(r.Value) != controlValueSize {
		return Marker{}, fmt.Errorf("wal: transaction marker value has %d bytes, want %d (version, coordinator epoch)", len(r.Value), controlValueSize)
	}
	if v := int16(binary.BigEndian.Uint16(r.Value)); v != 0 {
		return Marker{}, fmt.Errorf("wal: transaction marker value version %d, want 0", v)
	}
	return Marker{Type: t, CoordinatorEpoch: int32(binary.BigEndian.Uint32(r.Value[2:]))}, nil
}

// MarkerBatch is the control batch of a transaction marker for producer pid at epoch,
// ready to append (the log assigns the offset, the leader the leader epoch and time).
func MarkerBatch(pid int64, epoch int16, m Marker) Batch {
	return Batch{ProducerID: pid, ProducerEpoch: epoch, BaseSequence: NoSequence,
		Flags: FlagControl | FlagTransactional, Records: []Record{EncodeMarker(m)}}
}

// IsControl reports a control batch.
func (b *Batch) IsControl() bool { return b.Flags&FlagControl != 0 }

// IsTransactional reports a batch written inside a transaction, or a transaction marker.
func (b *Batch) IsTransactional() bool { return b.Flags&FlagTransactional != 0 }

// BatchMarker is the marker a control batch carries: an error if the batch is not a
// control batch of exactly one well-formed marker record.
func BatchMarker(b *Batch) (Marker, error) {
	if !b.IsControl() {
		return Marker{}, fmt.Errorf("wal: batch at %d is not a control batch", b.BaseOffset)
	}
	if len(b.Records) != 1 {
		return Marker{}, fmt.Errorf("wal: control batch at %d has %d records, want 1", b.BaseOffset, len(b.Records))
	}
	return DecodeMarker(b.Records[0])
}
