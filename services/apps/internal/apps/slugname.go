package apps

import (
	"crypto/rand"
	"fmt"
	"math/big"
)

// GenerateSlug returns a random adjective-bird slug. After several collisions the caller
// asks for a suffixed one (attempt > suffixAfter), which widens the space by 10,000 times,
// so creation never fails just because the plain pairs are crowded.
func GenerateSlug(attempt int) string {
	s := adjectives[randIndex(len(adjectives))] + "-" + birds[randIndex(len(birds))]
	if attempt > suffixAfter {
		s += fmt.Sprintf("-%04d", randIndex(10000))
	}
	return s
}

// suffixAfter is how many plain adjective-bird attempts come before suffixed ones.
const suffixAfter = 8

// MaxSlugAttempts bounds the retries of a generated slug on collision.
const MaxSlugAttempts = 24

func randIndex(n int) int {
	v, err := rand.Int(rand.Reader, big.NewInt(int64(n)))
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return int(v.Int64())
}
