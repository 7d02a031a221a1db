-- The framework each deploy's root package.json showed (decisions.md); deploys made before
-- detection showed none and are static, as their apps still read.
ALTER TABLE deploys ADD COLUMN framework text NOT NULL DEFAULT 'static'
    CHECK (framework IN ('static', 'vite', 'next', 'astro', 'sveltekit'));
