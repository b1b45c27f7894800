"""Word lists that give the MOBA world its heroes, nicknames, clans, rooms and chat lines.

Faker supplies people's first names and words for nicknames; the game vocabulary is ours.
Every hero name is invented (no hero of a real game).
"""

ROLES = ("tank", "fighter", "assassin", "mage", "marksman", "support")
LANES = ("clash", "mid", "farm", "jungle", "roam")
ROLE_LANES = {
    "tank": ("roam", "clash"),
    "fighter": ("clash", "jungle"),
    "assassin": ("jungle",),
    "mage": ("mid",),
    "marksman": ("farm",),
    "support": ("roam",),
}

# Ranked tiers, lowest first. Below Mythic a tier has stars 0-4 (a fifth star promotes);
# Mythic counts stars without a ceiling.
TIERS = ("Bronze", "Silver", "Gold", "Platinum", "Diamond", "Master", "Grandmaster", "Mythic")
STARS_PER_TIER = 5

# (name, role, secondary role or None). 118 invented heroes.
HEROES = [
    ("Brannoc", "tank", "support"), ("Ostrava", "tank", None), ("Gorrum", "tank", "fighter"),
    ("Helka Stoneward", "tank", None), ("Varrek", "tank", "fighter"), ("Mournhide", "tank", None),
    ("Tessaly", "tank", "support"), ("Jorund", "tank", None), ("Okoro", "tank", "fighter"),
    ("Bastion Quill", "tank", None), ("Rhedda", "tank", "support"), ("Kulgan", "tank", None),
    ("Ironmaw", "tank", "fighter"), ("Sunder", "tank", None), ("Pellam", "tank", "support"),
    ("Yorvath", "tank", None), ("Duskhelm", "tank", None), ("Ambra", "tank", "support"),
    ("Kestrin", "fighter", "assassin"), ("Valka Rue", "fighter", None), ("Torvald Ash", "fighter", "tank"),
    ("Ren Haoyu", "fighter", None), ("Saphra", "fighter", "assassin"), ("Dorran", "fighter", "tank"),
    ("Ilvane", "fighter", None), ("Marrow", "fighter", None), ("Caedric", "fighter", "tank"),
    ("Zhao Lanfeng", "fighter", "assassin"), ("Briska", "fighter", None), ("Halvard", "fighter", "tank"),
    ("Thessa Vane", "fighter", None), ("Corvane", "fighter", "assassin"), ("Ruun", "fighter", None),
    ("Ashkar", "fighter", "tank"), ("Lio Mei", "fighter", None), ("Grimwald", "fighter", None),
    ("Ysolde", "fighter", "mage"), ("Tarquin", "fighter", None),
    ("Nyx Calder", "assassin", None), ("Shen Yaolin", "assassin", "fighter"), ("Vesper", "assassin", None),
    ("Kairo", "assassin", None), ("Lunet", "assassin", "mage"), ("Rook", "assassin", None),
    ("Silvex", "assassin", "fighter"), ("Mirelle", "assassin", None), ("Tamsin Vale", "assassin", None),
    ("Qiao Yuren", "assassin", None), ("Zephra", "assassin", "marksman"), ("Draven Holt", "assassin", None),
    ("Sable", "assassin", None), ("Ekko Rhane", "assassin", "fighter"), ("Oriel", "assassin", None),
    ("Kitsu", "assassin", None), ("Velka", "assassin", "mage"), ("Jinra", "assassin", None),
    ("Aurelio", "mage", None), ("Celestine Moor", "mage", "support"), ("Ozrin", "mage", None),
    ("Lysandra", "mage", None), ("Wen Qiushui", "mage", "support"), ("Maelis", "mage", None),
    ("Thorne", "mage", "assassin"), ("Ixara", "mage", None), ("Pyra Voss", "mage", None),
    ("Elowen", "mage", "support"), ("Quillon", "mage", None), ("Serrat", "mage", None),
    ("Nimbra", "mage", "assassin"), ("Hollis Grey", "mage", None), ("Yue Liangshan", "mage", None),
    ("Caldera", "mage", None), ("Ombrine", "mage", "support"), ("Fennick", "mage", None),
    ("Astarel", "mage", None), ("Morwen", "mage", "assassin"),
    ("Tallis", "marksman", None), ("Renna Swift", "marksman", None), ("Orrin Thal", "marksman", "assassin"),
    ("Kaelan", "marksman", None), ("Xu Feiyan", "marksman", None), ("Brisa", "marksman", None),
    ("Hawkren", "marksman", "fighter"), ("Isolde Faye", "marksman", None), ("Corra", "marksman", None),
    ("Pemberly", "marksman", "mage"), ("Vantor", "marksman", None), ("Selka", "marksman", None),
    ("Garrow", "marksman", None), ("Lumi Aster", "marksman", "support"), ("Dashiel", "marksman", None),
    ("Mireya", "marksman", None), ("Tobin Reyes", "marksman", None), ("Quessa", "marksman", "assassin"),
    ("Aldwyn", "support", "tank"), ("Meliora", "support", None), ("Pim", "support", "mage"),
    ("Sorrel", "support", None), ("Hana Kiriyu", "support", None), ("Benedek", "support", "tank"),
    ("Wrenna", "support", None), ("Lotan", "support", "mage"), ("Tiamara", "support", None),
    ("Glimmer", "support", None), ("Oswin", "support", "tank"), ("Lan Xiaoqing", "support", None),
    ("Fable", "support", "mage"), ("Ruska", "support", None), ("Ondine", "support", None),
    ("Cassiel", "support", "mage"), ("Marigold", "support", None), ("Bramwell", "support", "tank"),
    ("Tiberon", "tank", None), ("Vashti", "mage", None), ("Kord", "fighter", None), ("Eira Blackwood", "assassin", None),
]

# One starter hero per role: every new player receives them.
STARTER_HEROES = ("Brannoc", "Kestrin", "Nyx Calder", "Aurelio", "Tallis", "Aldwyn")
# Heroes that only events and season rewards give; the shop does not sell them.
EVENT_HEROES = ("Sunder", "Marrow", "Sable", "Caldera", "Selka", "Glimmer", "Astarel", "Ysolde")
# Announced heroes whose release date is after the clock (in the shop once released).
UPCOMING_HEROES = ("Tiberon", "Vashti")

TITLE_WORDS = {
    "tank": ["Warden", "Bulwark", "Shieldbearer", "Colossus", "Sentinel", "Rampart", "Gatekeeper", "Guardian"],
    "fighter": ["Blademaster", "Duelist", "Warlord", "Vanguard", "Gladiator", "Ravager", "Spearhead", "Champion"],
    "assassin": ["Shadow", "Nightblade", "Phantom", "Stalker", "Whisper", "Reaper", "Viper", "Silent Fang"],
    "mage": ["Arcanist", "Stormcaller", "Sage", "Spellweaver", "Oracle", "Invoker", "Starseer", "Flamecaller"],
    "marksman": ["Sharpshooter", "Huntress", "Longbow", "Gunslinger", "Skyarrow", "Deadeye", "Ranger", "Windrunner"],
    "support": ["Lightbringer", "Mender", "Songkeeper", "Chimeweaver", "Lantern", "Dreamkeeper", "Herald", "Tidecaller"],
}
TITLE_PLACES = [
    "the Jade Canyon", "the Ashen Gate", "Cloudreach", "the Sunken Court", "the Ninth Lantern", "Frostmere",
    "the Crimson Tide", "Emberfall", "the Silver Steppe", "the Hollow Moon", "Thornwood", "the Amber Wastes",
    "the Last Bastion", "Stormpeak", "the Lotus Throne", "the Iron Vale", "Moonwell", "the Veiled Isles",
    "Duskharbor", "the Shattered Sky", "the Azure Dragon", "the White Tiger", "the Vermilion Bird", "Blackwater",
]
HERO_LORE = [
    "Once a {word} sworn to {place}, now fights for no banner but their own.",
    "Raised in {place}, the {word} learned that patience wins more battles than rage.",
    "Legends of {place} say the {word} has never lost a duel at dawn.",
    "The {word} carries the last relic of {place} and will not let it fall.",
    "Exiled from {place}, the {word} returned with a debt to settle.",
    "A {word} who guards the roads to {place} against anyone who comes uninvited.",
]

REGIONS = ("East Asia", "Southeast Asia", "Europe", "Americas", "Middle East")
REGION_WEIGHTS = (34, 30, 16, 12, 8)
SERVERS = {
    "East Asia": ["EA-1 Jade Harbor", "EA-2 Crane Peak", "EA-3 Lotus Court"],
    "Southeast Asia": ["SEA-1 Monsoon Bay", "SEA-2 Orchid Isle", "SEA-3 Coral Gate"],
    "Europe": ["EU-1 Northwind", "EU-2 Old Keep"],
    "Americas": ["NA-1 Redwood", "LA-1 Sol Plaza"],
    "Middle East": ["ME-1 Dune Crown"],
}
# Faker locales whose first names suit each region's nicknames.
REGION_LOCALES = {
    "East Asia": ["zh_CN", "zh_TW", "ko_KR", "ja_JP"],
    "Southeast Asia": ["id_ID", "vi_VN", "en_US"],
    "Europe": ["en_GB", "de_DE"],
    "Americas": ["en_US", "es_MX", "pt_BR"],
    "Middle East": ["tr_TR", "en_US"],
}

NICK_PREFIXES = ["Shadow", "Lil", "xX", "Dark", "Mr", "Ms", "Sir", "Neo", "Pro", "Its", "Captain", "King", "Queen",
                 "Lucky", "Silent", "Crazy", "Sleepy", "Frost", "Blaze", "Moon", "Sky", "Ghost", "Iron", "Tiny"]
NICK_WORDS = ["Lotus", "Tiger", "Dragon", "Carry", "Jungler", "Fang", "Blade", "Arrow", "Storm", "Panda", "Phoenix",
              "Noodle", "Dumpling", "Boba", "Mango", "Sniper", "Wolf", "Raven", "Comet", "Ninja", "Samurai", "Tofu",
              "Kitten", "Bunny", "Mochi", "Wukong", "Ace", "Legend", "Nova", "Rogue", "Spark", "Pixel", "Hunter"]
NICK_SUFFIXES = ["", "", "", "99", "007", "88", "_tw", "2k", "x", "Xx", "OP", "_gg", "666", "21", "_mvp", "3", "_sg"]
SIGNATURES = [
    "Carry or cry.", "Support mains deserve love too.", "Jungle is my kingdom.", "Looking for a duo for ranked, mid/roam.",
    "Mythic or bust this season!", "No flame, just games.", "Playing after work, add me :)", "Top lane is a lonely place.",
    "If I die it was lag.", "Tank main, I take the hits so you don't have to.", "GG WP always.",
    "Grinding proficiency on my mains.", "Casual brawl enjoyer.", "Back from a break, be gentle.",
    "Marksman one-trick.", "Will shotcall for snacks.", "", "", "", "Streaming weekends.",
]

TEAM_NAME_PARTS = (
    ["Crimson", "Azure", "Jade", "Midnight", "Golden", "Silent", "Iron", "Storm", "Lotus", "Phoenix", "Frost",
     "Ember", "Thunder", "Celestial", "Shadow", "Dawn", "Wild", "Royal", "Lunar", "Obsidian"],
    ["Dragons", "Tigers", "Blades", "Legion", "Covenant", "Vanguard", "Wolves", "Syndicate", "Order", "Dynasty",
     "Ravens", "Sentinels", "Kingdom", "Alliance", "Pact", "Tempest", "Clan", "Guard", "Circle", "Crew"],
)
TEAM_NOTICES = [
    "Weekly clan war on Saturday 20:00. Be online!", "Active players only; 7 days offline = kick.",
    "Ranked push this season: Diamond and above welcome.", "Chill clan for casual games. Be kind.",
    "Donate to the clan chest every week for rewards.", "Voice chat on our Discord for ranked teams.",
    "New members: say hi in clan chat and read the rules.", "We scrim other clans every Wednesday.",
    "Grandmaster+ only for the tournament roster.", "Brawl nights on Fridays, everyone welcome!",
]
APPLICATION_MESSAGES = [
    "Hi! Active every evening, main jungle.", "Looking for a team for ranked, I play support.",
    "Mythic last season, can shotcall.", "Friend of {name}, they invited me.", "Just want a friendly clan.",
    "I can play every role except marksman.", "Returning player, very active.", "Please accept, I donate weekly!",
    "", "Diamond mid laner looking for a home.",
]
FRIEND_MESSAGES = [
    "GG! Let's duo sometime.", "You carried that game, add me?", "Hi, I'm {name} from the clan.",
    "Need a support for ranked?", "Nice play with {hero}!", "", "", "Add me for brawl nights.",
    "We were teammates earlier, wp.", "Looking for a ranked partner.",
]
ROOM_NAMES = [
    "Ranked push {n}", "Brawl night", "Chill classic", "Scrim vs {team}", "Duo queue practice", "Clan war warm-up",
    "Custom 5v5 - no bans", "Late night ranked", "Newbies welcome", "Mythic grind", "{name}'s room",
    "Proficiency farming", "Tournament practice", "Fun picks only", "Weekend brawl",
]
