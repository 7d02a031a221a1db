-- Rate-limit counters live in the gateway's memory (one gateway) or in Redis (several), no
-- longer in a table every request wrote to.
DROP TABLE IF EXISTS counters;
