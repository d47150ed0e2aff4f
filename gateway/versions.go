package gateway

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// versionRange is the versions of one request the gateway serves.
type versionRange struct{ min, max int16 }

// servedVersions are the requests the gateway translates, with the versions whose fields
// it reads and fills; ApiVersions advertises exactly these, so a client never sends
// anything else (and a request outside them closes the connection, as Kafka does). The
// caps keep requests that name topics by name (Produce v13, Fetch v13 and OffsetFetch v10
// name them by topic id, which mqsim's metadata does not have) and one group per
// OffsetFetch (v8 batches groups).
var servedVersions = map[kmsg.Key]versionRange{
	kmsg.Produce:         {3, 12},
	kmsg.Fetch:           {4, 12},
	kmsg.ListOffsets:     {1, 8},
	kmsg.Metadata:        {1, 12},
	kmsg.OffsetCommit:    {2, 8},
	kmsg.OffsetFetch:     {1, 7},
	kmsg.FindCoordinator: {0, 4},
	kmsg.JoinGroup:       {0, 9},
	kmsg.Heartbeat:       {0, 4},
	kmsg.LeaveGroup:      {0, 5},
	kmsg.SyncGroup:       {0, 5},
	kmsg.ApiVersions:     {0, 3},
	kmsg.CreateTopics:    {2, 7},
	kmsg.InitProducerID:  {0, 4},
	// extra.go's requests.
	kmsg.OffsetForLeaderEpoch:   {2, 4},
	kmsg.DescribeCluster:        {0, 1},
	kmsg.AddPartitionsToTxn:     {0, 3},
	kmsg.AddOffsetsToTxn:        {0, 4},
	kmsg.EndTxn:                 {0, 5},
	kmsg.TxnOffsetCommit:        {0, 5},
	kmsg.ConsumerGroupHeartbeat: {0, 1},
}

// served is the version range of an API key, if the gateway serves it.
func served(key int16) (versionRange, bool) {
	v, ok := servedVersions[kmsg.Key(key)]
	return v, ok
}

// apiVersionsResponse lists servedVersions by key, as Kafka's ApiVersions answer does.
func apiVersionsResponse(version int16) *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(version)
	keys := make([]kmsg.Key, 0, len(servedVersions))
	for k := range servedVersions {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		ak := kmsg.NewApiVersionsResponseApiKey()
		ak.ApiKey, ak.MinVersion, ak.MaxVersion = int16(k), servedVersions[k].min, servedVersions[k].max
		resp.ApiKeys = append(resp.ApiKeys, ak)
	}
	return resp
}
