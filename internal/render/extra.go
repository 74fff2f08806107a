package render

import nc "git.unkin.net/unkin/bind-fn/internal/namedconf"

// extraOptions are spec.extraOptions, parsed and checked while the model
// was resolved (model.ParseExtraOptions).
func (b *confBuilder) extraOptions() []nc.Stmt { return b.c.ExtraOptions }
