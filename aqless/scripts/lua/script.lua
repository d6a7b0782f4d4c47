-- The end of the script (EVALSHA): one call.
return main(KEYS, ARGV)
