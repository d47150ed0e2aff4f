package gateway

import (
	"github.com/twmb/franz-go/pkg/kerr"

	"mqsim/model/proto"
)

// errorCodes maps mqsim's error names, which are Kafka's, to Kafka's codes, read from
// franz-go's kerr table so that no code is typed by hand.
var errorCodes = func() map[proto.Error]int16 {
	m := map[proto.Error]int16{}
	for code := int16(-1); code < 200; code++ {
		if e := kerr.TypedErrorForCode(code); e != nil && (e.Code == code) {
			m[proto.Error(e.Message)] = code
		}
	}
	// Kafka renamed NOT_LEADER_FOR_PARTITION (code 6) in 2.6 (KIP-584's era); kerr keeps
	// the old name.
	m[proto.NotLeaderOrFollower] = kerr.NotLeaderForPartition.Code
	return m
}()

// errorCode is the Kafka code of a model error: 0 for none, UNKNOWN_SERVER_ERROR (-1)
// for a name Kafka does not have.
func errorCode(e proto.Error) int16 {
	if e == proto.None {
		return 0
	}
	if c, ok := errorCodes[e]; ok {
		return c
	}
	return kerr.UnknownServerError.Code
}
