-- The end of the function library (FUNCTION LOAD, then FCALL): the same dispatcher, defined
-- once for every call instead of once per call.
redis.register_function('@FUNCTION@', function(keys, args) return main(keys, args) end)
