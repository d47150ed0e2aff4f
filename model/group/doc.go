// Package group is mqsim's consumer-group machinery: the group coordinator a broker hosts
// (join, sync, heartbeat, leave; members, generations, rebalances; committed offsets kept
// in a replicated internal topic) and the partition assignors a group leader runs.
package group
