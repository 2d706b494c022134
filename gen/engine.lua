-- onegpu template engine: expands kernel text with embedded Lua.
--
-- A line whose first non-blank character is '@' is a Lua statement; the rest
-- of the text is emitted, with ${expr} replaced by tostring(expr). Templates
-- see only their parameters and a few pure helpers (math, string, ipairs,
-- pairs, tostring, tonumber, error, assert), never io or os: a database holds
-- parameters, not code, and cannot make a template do anything else.
local engine = {}

local function emit_text(chunks, line)
  local pos = 1
  while true do
    local s, e = line:find("${", pos, true)
    if not s then break end
    local close = line:find("}", e + 1, true)
    if not close then error("unterminated ${ in template line: " .. line) end
    if s > pos then chunks[#chunks + 1] = ("_o[#_o+1]=%q"):format(line:sub(pos, s - 1)) end
    chunks[#chunks + 1] = ("_o[#_o+1]=tostring(%s)"):format(line:sub(e + 1, close - 1))
    pos = close + 1
  end
  chunks[#chunks + 1] = ("_o[#_o+1]=%q"):format(line:sub(pos) .. "\n")
end

-- Returns the Lua source a template compiles to (useful when a template
-- itself has an error: the line numbers match the template's).
function engine.translate(text)
  local chunks = { "local _o = {}" }
  if text:sub(-1) ~= "\n" then text = text .. "\n" end
  for line in text:gmatch("(.-)\n") do
    local stmt = line:match("^%s*@(.*)$")
    if stmt then chunks[#chunks + 1] = stmt else emit_text(chunks, line) end
  end
  chunks[#chunks + 1] = "return table.concat(_o)"
  -- One template line per Lua line keeps error line numbers meaningful:
  -- the header shares line 1 with the first template line.
  return chunks[1] .. " " .. table.concat(chunks, "\n", 2)
end

local safe = {
  math = math, string = string, table = table, ipairs = ipairs, pairs = pairs,
  tostring = tostring, tonumber = tonumber, error = error, assert = assert,
  type = type, select = select,
}

-- The words in which the dialects differ, for text the templates share:
-- GLSL and HLSL read the same C-like statements (common.tmpl's macros hide
-- the rest), WGSL declares with `var` / `let` after the name's place, writes
-- functions as `fn name(x: T) -> R` and selects with select(). Templates see
-- it as `lang`: lang.float, lang.precise (a float that is rounded as
-- written: GLSL and HLSL `precise`; WGSL has no such qualifier, see
-- docs/wgsl.md), lang.uint (never reassigned), lang.uvar, lang.bool
-- (prefixes of a declaration with its initial value), lang.entry (the entry
-- point's head), lang.fn(ret, name, args) (a function's head, args as
-- "float x, uint j"), lang.sel(cond, a, b) (a where cond, else b) and
-- lang.ty(t) (the dialect's name of the GLSL type t); WGSL's lang.bind(n)
-- is binding n's attributes.
local wgsl_types = { float = "f32", uint = "u32", int = "i32", bool = "bool" }

local function dialect_words(params)
  if params.DIALECT ~= "wgsl" then
    return {
      wgsl = false, float = "float ", precise = "precise float ", uint = "uint ",
      uvar = "uint ", bool = "bool ", entry = "ENTRY",
      fn = function(ret, name, args) return ("%s %s(%s)"):format(ret, name, args) end,
      sel = function(cond, a, b) return ("%s ? %s : %s"):format(cond, a, b) end,
      ty = function(t) return t end,
    }
  end
  return {
    wgsl = true, float = "var ", precise = "var ", uint = "let ", uvar = "var ", bool = "let ",
    entry = ("@compute @workgroup_size(%d, %d, 1)\nfn main(@builtin(local_invocation_id) LID: vec3<u32>, "
      .. "@builtin(workgroup_id) GID: vec3<u32>)"):format(params.LOCAL_X, params.LOCAL_Y),
    fn = function(ret, name, args)
      local list = {}
      for ty, arg in args:gmatch("(%w+) ([%w_]+)") do list[#list + 1] = arg .. ": " .. wgsl_types[ty] end
      return ("fn %s(%s) -> %s"):format(name, table.concat(list, ", "), wgsl_types[ret])
    end,
    sel = function(cond, a, b) return ("select(%s, %s, %s)"):format(b, a, cond) end,
    ty = function(t) return wgsl_types[t] end,
    -- A binding's attributes: a template line cannot start with '@'.
    bind = function(n) return ("@group(0) @binding(%d)"):format(n) end,
  }
end

-- Expands template `text` (named `name` in errors) with the parameter table
-- `params`. `parts` maps names to shared template text that ${include(name)}
-- expands with the same parameters.
function engine.expand(name, text, params, parts)
  local function include(part)
    local body = parts and parts[part]
    if not body then error("template " .. name .. " includes unknown part '" .. tostring(part) .. "'", 2) end
    return engine.expand(part, body, params, parts)
  end
  local env = setmetatable({}, {
    __index = function(_, key)
      local v = params[key]
      if v == nil and key == "include" then v = include end
      if v == nil and key == "lang" then v = dialect_words(params) end
      if v == nil then v = safe[key] end
      if v == nil then error("template " .. name .. " uses undefined name '" .. tostring(key) .. "'", 2) end
      return v
    end,
  })
  local fn, err = load(engine.translate(text), "=" .. name, "t", env)
  if not fn then error(err, 0) end
  return fn()
end

return engine
