package apps

// The word lists of generated slugs: plain lower-case words, so every pair is a valid slug,
// and kept long enough (well over 100 × 100 pairs) that collisions stay rare.

var adjectives = []string{
	"agile", "amber", "ancient", "autumn", "azure", "bold", "brave", "breezy", "bright", "brisk",
	"bubbly", "calm", "candid", "cheerful", "clever", "cosmic", "cozy", "crimson", "crisp", "curious",
	"dapper", "daring", "dazzling", "dusky", "eager", "early", "earnest", "elegant", "emerald", "fabled",
	"fearless", "feisty", "fluffy", "fond", "frosty", "gallant", "gentle", "giddy", "glad", "gleaming",
	"golden", "graceful", "grand", "happy", "hardy", "hazy", "hidden", "humble", "icy", "jade",
	"jolly", "jovial", "keen", "kind", "lively", "lofty", "lucky", "lunar", "mellow", "merry",
	"mighty", "misty", "modest", "mossy", "nimble", "noble", "opal", "plucky", "polar", "proud",
	"quick", "quiet", "radiant", "rapid", "rosy", "royal", "rugged", "rustic", "sandy", "scarlet",
	"serene", "shiny", "silent", "silver", "sleek", "smooth", "snowy", "snug", "solar", "sparkling",
	"spirited", "sprightly", "spry", "steady", "stellar", "stormy", "sturdy", "sunny", "swift", "tawny",
	"tidy", "tiny", "tranquil", "trusty", "upbeat", "valiant", "velvet", "verdant", "vernal", "vivid",
	"wandering", "warm", "whimsical", "wild", "windy", "wise", "wistful", "witty", "woolly", "zesty",
}

var birds = []string{
	"albatross", "anhinga", "auk", "avocet", "babbler", "barbet", "bittern", "blackbird", "bluebird", "bobolink",
	"bowerbird", "budgerigar", "bulbul", "bunting", "bustard", "canary", "caracara", "cardinal", "cassowary", "catbird",
	"chickadee", "condor", "coot", "cormorant", "courser", "crane", "crossbill", "crow", "cuckoo", "curlew",
	"dipper", "dove", "drongo", "duck", "dunlin", "eagle", "egret", "eider", "emu", "falcon",
	"fantail", "finch", "flamingo", "flicker", "flycatcher", "frigatebird", "frogmouth", "gannet", "godwit", "goldfinch",
	"goose", "goshawk", "grackle", "grebe", "grosbeak", "grouse", "guillemot", "gull", "harrier", "hawk",
	"heron", "hoatzin", "honeyeater", "hoopoe", "hornbill", "hummingbird", "ibis", "jacana", "jackdaw", "jay",
	"junco", "kakapo", "kea", "kestrel", "kingbird", "kingfisher", "kinglet", "kite", "kiwi", "lapwing",
	"lark", "limpkin", "linnet", "loon", "lorikeet", "lyrebird", "macaw", "magpie", "mallard", "martin",
	"meadowlark", "merganser", "merlin", "minivet", "mockingbird", "moorhen", "motmot", "myna", "nightjar", "noddy",
	"nuthatch", "oriole", "osprey", "ostrich", "owl", "oxpecker", "parakeet", "parrot", "partridge", "pelican",
	"penguin", "petrel", "pewee", "phalarope", "pheasant", "phoebe", "pigeon", "pintail", "pipit", "pitta",
	"plover", "potoo", "ptarmigan", "puffin", "quail", "quetzal", "rail", "raven", "redpoll", "rhea",
	"roadrunner", "robin", "rook", "sanderling", "sandpiper", "shearwater", "shoebill", "shrike", "siskin", "skimmer",
	"skua", "skylark", "snipe", "sparrow", "spoonbill", "starling", "stilt", "stork", "sunbird", "swallow",
	"swan", "swift", "tanager", "teal", "tern", "thrasher", "thrush", "tinamou", "toucan", "towhee",
	"trogon", "turnstone", "vireo", "wagtail", "warbler", "waxwing", "weaver", "wigeon", "woodpecker", "wren",
}
