// Package proto is the language mqsim's Kafka-style nodes speak: the requests and
// responses between clients, brokers and the controller, their error codes, and the one
// typed configuration (with Kafka's names and defaults) that every node reads.
//
// Messages are immutable values: a node that sends one never changes it afterwards, and a
// node that receives one copies what it keeps. Each message renders itself in one line for
// the trace.
//
// Simplifications, each in one line: one request carries one partition; there are no
// connections (a request is a message, its response another, matched by CorrelationID);
// brokers learn metadata only from the controller's pushes; record batches are not
// compressed.
package proto
