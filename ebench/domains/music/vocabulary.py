"""Word lists that give the music world its titles, lyrics, labels and genres.

Faker supplies people's names; the music-specific vocabulary is ours, so titles read like a
streaming catalogue rather than lorem ipsum.
"""

# (name, parent name or None, description)
GENRES = [
    ("Pop", None, "Catchy, hook-driven mainstream music."),
    ("K-Pop", "Pop", "Korean pop with polished production and idol groups."),
    ("J-Pop", "Pop", "Japanese pop, from city pop revival to anime themes."),
    ("Mandopop", "Pop", "Mandarin-language pop ballads and dance tracks."),
    ("Cantopop", "Pop", "Cantonese-language pop from Hong Kong."),
    ("Synthpop", "Pop", "Pop built on synthesizers and drum machines."),
    ("Rock", None, "Guitar-driven music from classic to modern."),
    ("Indie Rock", "Rock", "Independent, lo-fi leaning guitar rock."),
    ("Metal", "Rock", "Heavy, distorted and fast."),
    ("Punk", "Rock", "Short, loud and raw."),
    ("Hip-Hop", None, "Rhythm and rhymes over beats."),
    ("Trap", "Hip-Hop", "Hip-hop with rolling hi-hats and heavy 808s."),
    ("R&B", None, "Rhythm and blues, soul-influenced vocals."),
    ("Electronic", None, "Music made with electronic instruments."),
    ("House", "Electronic", "Four-on-the-floor dance music."),
    ("Techno", "Electronic", "Repetitive, driving club music."),
    ("Lo-fi", "Electronic", "Mellow, dusty beats for studying and relaxing."),
    ("Ambient", "Electronic", "Atmospheric textures with little rhythm."),
    ("Jazz", None, "Improvisation, swing and blue notes."),
    ("Classical", None, "Orchestral and chamber works."),
    ("Folk", None, "Acoustic songs rooted in tradition."),
    ("Country", None, "Storytelling with guitars and fiddles."),
    ("Latin", None, "Reggaeton, salsa, bachata and Latin pop."),
    ("Soundtrack", None, "Music from films, series and games."),
]

# Genres whose songs are mostly instrumental (no lyrics).
INSTRUMENTAL_GENRES = {"Classical", "Ambient", "Lo-fi", "Techno", "Soundtrack"}

TAGS = [
    ("chill", "mood"), ("upbeat", "mood"), ("melancholy", "mood"), ("romantic", "mood"),
    ("energetic", "mood"), ("dreamy", "mood"), ("dark", "mood"), ("hopeful", "mood"),
    ("nostalgic", "mood"), ("angry", "mood"),
    ("workout", "activity"), ("study", "activity"), ("sleep", "activity"), ("party", "activity"),
    ("driving", "activity"), ("rainy day", "activity"), ("cooking", "activity"), ("focus", "activity"),
    ("80s", "era"), ("90s", "era"), ("2000s", "era"), ("2010s", "era"), ("2020s", "era"),
    ("acoustic", "sound"), ("live", "sound"), ("instrumental", "sound"), ("remix", "sound"),
    ("piano", "sound"), ("orchestral", "sound"), ("a cappella", "sound"),
]

ADJECTIVES = [
    "Golden", "Silent", "Electric", "Broken", "Endless", "Midnight", "Velvet", "Neon", "Paper",
    "Hollow", "Crimson", "Wild", "Gentle", "Frozen", "Burning", "Lonely", "Secret", "Fading",
    "Restless", "Distant", "Silver", "Sweet", "Bitter", "Blue", "Quiet", "Shining", "Falling",
    "Lost", "Open", "Hidden", "Little", "Summer", "Winter", "Autumn", "Spring", "Lucky",
    "Sleepless", "Faded", "Bright", "Heavy", "Cosmic", "Tender", "Stolen", "Northern", "Sunday",
]

NOUNS = [
    "Heart", "City", "Ocean", "River", "Dream", "Fire", "Light", "Shadow", "Sky", "Road",
    "Moon", "Star", "Rain", "Garden", "Mirror", "Letter", "Window", "Highway", "Echo", "Storm",
    "Horizon", "Memory", "Island", "Signal", "Thunder", "Ghost", "Angel", "Flower", "Wave",
    "Season", "Satellite", "Promise", "Secret", "Mountain", "Harbor", "Avenue", "Lullaby",
    "Polaroid", "Paradise", "Frequency", "Cathedral", "Compass", "Daylight", "Wildfire", "Tide",
]

VERBS = [
    "Run", "Fall", "Dance", "Breathe", "Wait", "Shine", "Hold On", "Let Go", "Stay", "Drive",
    "Remember", "Forget", "Believe", "Wake Up", "Come Home", "Fly", "Burn", "Hide", "Dream",
]

TITLE_PATTERNS = [
    "{adj} {noun}", "{noun}", "{adj} {noun}s", "{noun} of {noun}s", "{verb}", "{verb} With Me",
    "The {adj} {noun}", "{noun} in the {noun}", "{verb} Tonight", "{adj}", "Last {noun}",
    "{noun} Song", "Before the {noun}", "{adj} Hearts", "Into the {noun}", "{verb} Again",
]

ALBUM_PATTERNS = [
    "{adj} {noun}", "{noun}s", "The {adj} Sessions", "{noun} & {noun}", "Chapter {num}",
    "{adj} Nights", "Letters from the {noun}", "{noun} Diaries", "Songs for a {adj} {noun}",
    "{adj} Era", "{noun}", "Vol. {num}", "{adj} Season",
]

BAND_PATTERNS = [
    "The {adj} {noun}s", "{adj} {noun}", "{noun} Club", "{noun}s of {noun}", "The {noun}s",
    "{adj} Kids", "{noun} Theory", "{noun} Parade", "{adj} Youth", "Club {noun}",
]

ORCHESTRA_PATTERNS = [
    "{city} Philharmonic", "{city} Chamber Orchestra", "{city} String Quartet",
    "{city} Symphony Ensemble",
]

# country code -> cities an ensemble from there may be named after
CITIES = {
    "US": ["Boston", "Chicago"], "GB": ["London", "Manchester"], "CA": ["Toronto"], "AU": ["Sydney"],
    "KR": ["Seoul", "Busan"], "JP": ["Osaka", "Tokyo"], "CN": ["Shanghai", "Beijing"], "TW": ["Taipei"],
    "HK": ["Hong Kong"], "ES": ["Madrid", "Barcelona"], "MX": ["Mexico City"], "BR": ["São Paulo"],
    "FR": ["Paris", "Lyon"], "DE": ["Berlin", "Leipzig"], "SE": ["Stockholm", "Gothenburg"],
}

LYRIC_LINES = [
    "I still hear your voice in the {noun}",
    "we were dancing on the edge of the {noun}",
    "hold me till the {adj} morning comes",
    "every {noun} leads me back to you",
    "the city lights are fading slow",
    "I wrote your name on a {adj} {noun}",
    "don't let go, don't let go tonight",
    "running through the {adj} rain",
    "you were the {noun} I couldn't keep",
    "we don't talk about the {noun} anymore",
    "turn it up, let the {noun} burn",
    "somewhere between the stars and the sea",
    "I keep chasing {adj} dreams",
    "say my name like you used to",
    "the night is young and so are we",
    "I found a {noun} in your eyes",
    "tell me why the {noun} still shines",
    "all the {adj} words we never said",
]

LABELS = [
    "Northern Lights Records", "Blue Harbor Music", "Velvet Tone", "Paper Moon Records",
    "Skyline Entertainment", "Golden Hour Music", "Echo Valley", "Neon Grid Records",
    "Riverstone Audio", "Starfield Label", "Red Lantern Music", "Moonbeam Records",
    "Independent", "Silverline Studios", "Orbit Sound",
]

COMMENT_TEMPLATES = [
    "This song got me through a hard year.",
    "The bridge at {time} gives me chills every time.",
    "Who else is listening in {year}?",
    "Underrated. Deserves way more plays.",
    "The production on this is unreal.",
    "My favourite track on the album.",
    "Played this on repeat all week.",
    "Saw them live last summer, this one was incredible.",
    "Reminds me of driving home at night.",
    "The lyrics hit different at 2am.",
    "Can't believe this is not more popular.",
    "Perfect song for a rainy day.",
    "That {adj} vocal line is everything.",
    "Adding this to my study playlist.",
    "Still a classic.",
    "The live version is even better.",
    "Is there an acoustic version of this?",
    "This deserves a music video.",
]

REPLY_TEMPLATES = [
    "Totally agree!", "Same here.", "Yes! That part is amazing.", "Couldn't have said it better.",
    "Not sure about that, but the chorus is great.", "Me too, every single day.",
    "The acoustic one is on their live album.", "Right? So underrated.",
]

PLAYLIST_NAMES = [
    "Morning Coffee", "Late Night Drive", "Gym Mode", "Focus Flow", "Rainy Day Mix",
    "Throwbacks", "Sunday Chill", "Party Starters", "Road Trip", "Heartbreak Hotel",
    "Study Session", "Summer Vibes", "Deep Focus", "Sleepy Time", "Cooking Beats",
    "Favourites 2024", "Favourites 2025", "Indie Finds", "K-Pop Essentials", "Jazz Evenings",
    "Workout Hits", "Commute", "Discover Weekly Saves", "Acoustic Mornings", "Feel Good",
    "Night Owl", "Golden Oldies", "Weekend Mood", "Piano Calm", "Dance Floor",
]

PLAYLIST_DESCRIPTIONS = [
    "", "", "Songs I keep coming back to.", "For long drives.", "No skips.",
    "Curated with love.", "Updated whenever I find something new.", "For the quiet hours.",
]

BIO_TEMPLATES = [
    "{type_word} from {country}, known for {adj} melodies and {adj2} live shows.",
    "{type_word} from {country} blending {genre} with {genre2} influences.",
    "Formed in {year}, this {type_word} from {country} has toured worldwide.",
    "{type_word} from {country} whose {adj} sound defined a generation of {genre}.",
]

USER_BIOS = [
    "", "", "music is life", "always looking for new songs", "playlist curator",
    "concert addict", "vinyl collector", "headphones on, world off", "K-pop and coffee",
    "jazz in the evening, rock in the morning",
]

# country code -> (Faker locale for names, song language)
COUNTRIES = {
    "US": ("en_US", "English"),
    "GB": ("en_GB", "English"),
    "CA": ("en_US", "English"),
    "AU": ("en_GB", "English"),
    "KR": ("ko_KR", "Korean"),
    "JP": ("ja_JP", "Japanese"),
    "CN": ("zh_CN", "Mandarin"),
    "TW": ("zh_TW", "Mandarin"),
    "HK": ("zh_TW", "Cantonese"),
    "ES": ("es_ES", "Spanish"),
    "MX": ("es_MX", "Spanish"),
    "BR": ("pt_BR", "Portuguese"),
    "FR": ("fr_FR", "French"),
    "DE": ("de_DE", "German"),
    "SE": ("sv_SE", "Swedish"),
}

# genre -> countries its artists mostly come from
GENRE_COUNTRIES = {
    "K-Pop": ["KR"], "J-Pop": ["JP"], "Mandopop": ["CN", "TW"], "Cantopop": ["HK"],
    "Latin": ["MX", "ES", "BR"], "Country": ["US", "CA"],
}

USER_COUNTRIES = ["CN", "CN", "CN", "CN", "HK", "TW", "US", "GB", "KR", "JP", "SE", "DE"]
