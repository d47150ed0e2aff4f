// Package lab is the ordered-retries lab: an application hands records to a producer,
// in order per key, and the learner's code decides how the producer sends them to the
// partition leaders of a Kafka-style cluster whose producers are not idempotent: when
// to send, how many requests to keep in flight, what to retry. Each key's acknowledged
// records must land in the log in the order the application handed them over, through
// lost and duplicated messages, delays, request timeouts and leader failovers.
//
// The learner implements Sender (in starter/, their copy); the rest of this package is
// the lab's world: the producer node that gives the Sender its records, carries its
// requests to the leaders and brings back the answers (producer.go), and the checker
// (check.go). The reference solution is in solution/.
//
// The learner's code runs inside mqsim's deterministic simulation, so it obeys the
// model's rules (no goroutines, channels, clock, OS, global random source or map order),
// and imports nothing of mqsim but this package: mqsim lab checks both before it runs.
package lab

import (
	"embed"
	"errors"
	"time"
)

// Record is one record of the application.
type Record struct {
	// Key decides the partition (Kafka's default partitioner: murmur2 of the key); the
	// application hands the records of one key over in the order it wants them read.
	Key string
	// Value is unique per record: v1, v2, ... in the order the application handed
	// them over.
	Value string
	// Partition is the partition of the topic the key maps to.
	Partition int32
}

// RequestID names one request the producer sent.
type RequestID int64

// Response is the answer to one request.
type Response struct {
	Request RequestID
	// Records are the records the request carried, in its order.
	Records []Record
	// Err is nil when the partition's leader appended the records and every in-sync
	// replica has them (acks=all): they are in the log, Records[i] at Offset+i.
	// Otherwise it says why not (ErrTimeout, or the broker's error, such as
	// NOT_LEADER_OR_FOLLOWER or NOT_ENOUGH_REPLICAS). Every error is worth a retry, and
	// none says the records are not in the log: a request that timed out may have
	// been appended, and so may one the leader answered with an error after it
	// appended (a leader that lost its ISR while it waited).
	Err    error
	Offset int64
}

// BrokerError is an error a partition's leader answered with, by Kafka's name
// (NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS, ...).
type BrokerError string

func (e BrokerError) Error() string { return string(e) }

// ErrTimeout is the error of a request that got no answer within RequestTimeout. An
// answer that comes later is dropped, as Kafka's producer drops the connection.
var ErrTimeout = errors.New("no answer within the request timeout")

// ErrTooManyInFlight is Produce's error when MaxInFlight requests wait for answers.
var ErrTooManyInFlight = errors.New("too many requests in flight")

// The producer's limits (Kafka's names and defaults where they exist).
const (
	// MaxInFlight is how many requests may wait for their answers at once
	// (max.in.flight.requests.per.connection, 5 by default).
	MaxInFlight = 5
	// RequestTimeout is how long a request waits for its answer (request.timeout.ms;
	// 30s in Kafka, shorter here so that a run sees many).
	RequestTimeout = 2 * time.Second
	// RetryBackoff is how long the producer holds a request to a partition after an
	// error from it (retry.backoff.ms, 100ms).
	RetryBackoff = 100 * time.Millisecond
)

// Transport is what the Sender sends with: the producer's connections to the leaders.
type Transport interface {
	// Produce sends records, all of one partition, in one request to that partition's
	// leader, and returns the request's id; its Response comes to Answered within
	// RequestTimeout. The request leaves at once, or when the producer knows the
	// partition's leader and RetryBackoff has passed since that partition's last error:
	// requests to one partition leave in the order Produce was called. It is an error
	// to send no records, records of several partitions, or more than MaxInFlight
	// requests at once.
	Produce(records ...Record) (RequestID, error)
	// InFlight is how many requests wait for their answers.
	InFlight() int
	// Acknowledge tells the application that r is in the log: it was handed over to
	// you, and it counts from now on. A second Acknowledge of the same record is
	// ignored.
	Acknowledge(r Record)
}

// Sender is the code the learner writes: the producer's sending logic.
type Sender interface {
	// Send is called when the application hands a record over. Records of one key come
	// in the order the application wants them in the log.
	Send(t Transport, r Record)
	// Answered is called with the answer to each request, or its timeout, exactly once
	// per request.
	Answered(t Transport, res Response)
}

// Sources are the Go files of the learner's code and of the reference solution, as
// compiled into this binary: mqsim lab checks them for the determinism rules.
//
//go:embed starter/*.go solution/*.go
var Sources embed.FS
