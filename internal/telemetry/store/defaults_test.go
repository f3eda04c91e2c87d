package store

// defaults applies the schema defaults to an input, as the generated decoder does before a
// flow runs: the flows never repeat them.
func defaults[T any, P interface {
	*T
	ApplyDefaults()
}](in T) T {
	P(&in).ApplyDefaults()
	return in
}
