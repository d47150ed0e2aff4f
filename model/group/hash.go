package group

import "unicode/utf16"

// PartitionFor is the partition of the offsets topic that holds a group's offsets and
// metadata, and so whose leader coordinates the group: Kafka's
// Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions, with Java's String.hashCode
// (over UTF-16 code units) and Utils.abs (which maps Integer.MIN_VALUE to 0).
func PartitionFor(groupID string, partitions int) int32 {
	if partitions <= 0 {
		return 0
	}
	return int32(javaAbs(javaHashCode(groupID)) % int32(partitions))
}

// javaHashCode is java.lang.String.hashCode: s[0]*31^(n-1) + ... + s[n-1], in int32
// arithmetic that wraps.
func javaHashCode(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

// javaAbs is org.apache.kafka.common.utils.Utils.abs.
func javaAbs(n int32) int32 {
	if n == -1<<31 {
		return 0
	}
	if n < 0 {
		return -n
	}
	return n
}
