// SPDX-License-Identifier: Apache-2.0

package reporter

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// The validation file is rocenet-diagd's NFD feature file
// (docs/diagnostics.md#the-scheduler-sees-the-result):
//
//	# +expiry-time=2026-12-05T10:00:00Z
//	# rocenet: rdma stage passed at 2026-12-04T10:00:00Z, coordinated by node-a
//	rocenet.io/scale-out-validated=rdma
//
// or, after a failure, only the comment:
//
//	# rocenet: ethernet stage failed at 2026-12-04T10:00:00Z, coordinated by node-a: <what failed>
const validatedLabel = "rocenet.io/scale-out-validated="

var noteTime = regexp.MustCompile(`stage (?:passed|failed) at (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)`)

// ReadValidation reads the node's last diagnostics result from the
// validation file at path: nil when there is none (no file, or a label
// past its expiry, as NFD would drop it), an error when it cannot be read.
func ReadValidation(path string, now time.Time) (*v1alpha1.Validation, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("validation file %s: %w", path, err)
	}
	defer func() { _ = f.Close() }()
	var v v1alpha1.Validation
	var expiry time.Time
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		switch {
		case strings.HasPrefix(line, "# +expiry-time="):
			t, err := time.Parse(time.RFC3339, strings.TrimPrefix(line, "# +expiry-time="))
			if err != nil {
				return nil, fmt.Errorf("validation file %s: expiry-time: %w", path, err)
			}
			expiry = t
		case strings.HasPrefix(line, "# rocenet: "):
			v.Message = strings.TrimPrefix(line, "# rocenet: ")
			if m := noteTime.FindStringSubmatch(v.Message); m != nil {
				if t, err := time.Parse(time.RFC3339, m[1]); err == nil {
					v.Time = &metav1.Time{Time: t}
				}
			}
		case strings.HasPrefix(line, validatedLabel):
			v.Stage = strings.TrimPrefix(line, validatedLabel)
		}
	}
	if err := scanner.Err(); err != nil {
		return nil, fmt.Errorf("validation file %s: %w", path, err)
	}
	if v.Stage != "" && !expiry.IsZero() && !now.Before(expiry) {
		return nil, nil
	}
	if v.Stage == "" && v.Message == "" {
		return nil, nil
	}
	return &v, nil
}
