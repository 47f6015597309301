// SPDX-License-Identifier: Apache-2.0

package nodestream

import "time"

// Jitter is f's stretch of its waits; SetJitter puts a test's own in its
// place.
func Jitter(f *Follower) func(time.Duration) time.Duration { return f.jitter }

func SetJitter(f *Follower, jitter func(time.Duration) time.Duration) { f.jitter = jitter }
