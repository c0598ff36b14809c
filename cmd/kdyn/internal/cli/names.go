package cli

import "math/rand/v2"

// RandomSuffix is n characters of kubectl's alphabet for generated names
// (k8s.io/apimachinery's rand.String: no vowels, no confusable digits), as
// in a debug container's "debugger-x7k2p" or a deployment container's
// "my-app-x7k2p".
func RandomSuffix(n int) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rand.IntN(len(alphabet))]
	}
	return string(b)
}
