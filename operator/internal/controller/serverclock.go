// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"k8s.io/client-go/rest"
)

// ServerClock tells the API server's time: what the times it stamps on
// objects (managedFields, creationTimestamp) are measured against.
type ServerClock interface {
	Now(ctx context.Context) (time.Time, error)
}

// APIServerClock reads the API server's time from the Date header of its
// answer to GET /version (every HTTP server stamps one; to the second),
// which every user may ask (system:public-info-viewer).
type APIServerClock struct {
	url    string
	client *http.Client
}

// NewAPIServerClock is the clock of cfg's API server, asked with cfg's
// credentials and transport.
func NewAPIServerClock(cfg *rest.Config) (*APIServerClock, error) {
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("the API server's clock: %w", err)
	}
	base, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("the API server's clock: %w", err)
	}
	base.Path = "/version"
	return &APIServerClock{url: base.String(), client: client}, nil
}

// Now is the API server's time as its answer says.
func (c *APIServerClock) Now(ctx context.Context) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return time.Time{}, err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return time.Time{}, fmt.Errorf("the API server's time: GET %s: %w", c.url, err)
	}
	_ = resp.Body.Close()
	date := resp.Header.Get("Date")
	if date == "" {
		return time.Time{}, fmt.Errorf("the API server's time: GET %s (%s): no Date header", c.url, resp.Status)
	}
	t, err := http.ParseTime(date)
	if err != nil {
		return time.Time{}, fmt.Errorf("the API server's time: GET %s: Date %q: %w", c.url, date, err)
	}
	return t, nil
}
