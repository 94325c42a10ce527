//go:build !linux

package doctor

import "context"

func statfs(string) (Space, error) { return Space{}, ErrUnsupported }

func userNS(context.Context) error { return ErrUnsupported }
