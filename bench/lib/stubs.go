package lib

import (
	"context"
	"errors"
)

func (b *Bench) Mapper(ctx context.Context) (*Table, error)    { return nil, errors.New("todo") }
func (b *Bench) Dynamic(ctx context.Context) (*Table, error)   { return nil, errors.New("todo") }
func (b *Bench) Informer(ctx context.Context) (*Table, error)  { return nil, errors.New("todo") }
func (b *Bench) Footprint(ctx context.Context) (*Table, error) { return nil, errors.New("todo") }
func (b *Bench) Load(ctx context.Context) (*Table, error)      { return nil, errors.New("todo") }
func informerChild(ctx context.Context, name string, args ChildArgs, io *childIO) (any, error) {
	return nil, errors.New("todo")
}
func loadChild(ctx context.Context, name string, args ChildArgs) (any, error) {
	return nil, errors.New("todo")
}
