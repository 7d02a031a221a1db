package catalog

import "errors"

var (
	// ErrUnknownPlan means the name is not one of the catalog's plans.
	ErrUnknownPlan = errors.New("catalog: unknown plan")
	// ErrNotPurchasable means the plan exists but costs nothing, so there is nothing to buy.
	ErrNotPurchasable = errors.New("catalog: plan is free and cannot be bought")
	// ErrUnknownInterval means the billing interval is neither month nor year.
	ErrUnknownInterval = errors.New("catalog: unknown billing interval")
)
