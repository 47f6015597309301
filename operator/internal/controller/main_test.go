// SPDX-License-Identifier: Apache-2.0

package controller

// The Envtest tests start several managers in one process.
func init() { skipNameValidation = true }
