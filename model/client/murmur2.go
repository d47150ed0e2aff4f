package client

// Murmur2 is Kafka's 32-bit murmur2 hash (org.apache.kafka.common.utils.Utils.murmur2),
// bit for bit: the default partitioner hashes a record's serialized key with it.
func Murmur2(data []byte) int32 {
	const (
		seed uint32 = 0x9747b28c
		m    uint32 = 0x5bd1e995
		r           = 24
	)
	length := len(data)
	h := seed ^ uint32(length)
	for i := 0; i+4 <= length; i += 4 {
		k := uint32(data[i]) | uint32(data[i+1])<<8 | uint32(data[i+2])<<16 | uint32(data[i+3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	tail := length &^ 3
	switch length % 4 {
	case 3:
		h ^= uint32(data[tail+2]) << 16
		fallthrough
	case 2:
		h ^= uint32(data[tail+1]) << 8
		fallthrough
	case 1:
		h ^= uint32(data[tail])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return int32(h)
}

// toPositive is Kafka's Utils.toPositive: the hash with its sign bit cleared (not the
// absolute value, which overflows for MinInt32).
func toPositive(n int32) int32 { return n & 0x7fffffff }

// KeyPartition is the partition Kafka's default partitioner gives a keyed record:
// toPositive(murmur2(key)) % partitions. partitions must be positive.
func KeyPartition(key []byte, partitions int) int32 {
	if partitions <= 0 {
		panic("client: KeyPartition with no partitions")
	}
	return toPositive(Murmur2(key)) % int32(partitions)
}
