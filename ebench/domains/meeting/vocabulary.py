"""Word lists that give the meeting world its organisation, rooms, meeting titles and chat talk.

Faker supplies people's names and phone numbers; the workplace vocabulary is ours, so titles
read like a real company's calendar rather than lorem ipsum.
"""

COMPANY = "Qingyun Technology"

# (city, country, office name, address, headquarters)
LOCATIONS = [
    ("Shenzhen", "China", "Shenzhen HQ", "No. 33 Haitian Road, Nanshan District", 1),
    ("Beijing", "China", "Beijing Office", "No. 10 Xibeiwang East Road, Haidian District", 0),
    ("Shanghai", "China", "Shanghai Office", "No. 397 Tianlin Road, Xuhui District", 0),
    ("Guangzhou", "China", "Guangzhou Office", "No. 1 Huacheng Avenue, Tianhe District", 0),
    ("Chengdu", "China", "Chengdu Office", "No. 1480 Tianfu Avenue, Hi-tech Zone", 0),
    ("Singapore", "Singapore", "Singapore Office", "10 Anson Road, #20-01", 0),
]

# Buildings per city: (name, code, floors)
BUILDINGS = {
    "Shenzhen": [("Binhai Tower", "SZ-BH", 48), ("Kexing Science Park B", "SZ-KX", 12), ("Qianhai Center", "SZ-QH", 30)],
    "Beijing": [("Zhongguancun Plaza", "BJ-ZGC", 20), ("Wangjing SOHO T2", "BJ-WJ", 36)],
    "Shanghai": [("Xuhui Riverside Tower", "SH-XH", 28), ("Zhangjiang Innovation Hub", "SH-ZJ", 9)],
    "Guangzhou": [("Tianhe Twin Tower", "GZ-TH", 40)],
    "Chengdu": [("Tianfu Software Park E3", "CD-TF", 10), ("Jiaozi Financial Center", "CD-JZ", 22)],
    "Singapore": [("Anson Centre", "SG-AC", 25)],
}

# Room names: each building draws from these themes.
ROOM_THEMES = [
    [
        "Mount Tai",
        "Mount Hua",
        "Mount Emei",
        "Mount Huang",
        "Mount Wutai",
        "Mount Lu",
        "Mount Song",
        "Mount Heng",
        "Mount Wuyi",
        "Kunlun",
        "Tianshan",
        "Qilian",
        "Everest",
        "Meili",
        "Gongga",
        "Siguniang",
    ],
    [
        "Yangtze",
        "Yellow River",
        "Pearl River",
        "Lijiang",
        "Xiang River",
        "Min River",
        "Han River",
        "Huai River",
        "Jialing",
        "Wu River",
        "Lancang",
        "Nu River",
        "Songhua",
        "Liao River",
        "Qiantang",
        "Ganjiang",
    ],
    [
        "Orion",
        "Lyra",
        "Cygnus",
        "Draco",
        "Pegasus",
        "Andromeda",
        "Cassiopeia",
        "Perseus",
        "Aquila",
        "Vega",
        "Sirius",
        "Polaris",
        "Altair",
        "Rigel",
        "Deneb",
        "Capella",
    ],
    [
        "Plum",
        "Orchid",
        "Bamboo",
        "Chrysanthemum",
        "Lotus",
        "Peony",
        "Camellia",
        "Osmanthus",
        "Magnolia",
        "Jasmine",
        "Azalea",
        "Gardenia",
        "Begonia",
        "Wisteria",
        "Narcissus",
        "Ginkgo",
    ],
    [
        "Hangzhou",
        "Suzhou",
        "Xi'an",
        "Luoyang",
        "Kaifeng",
        "Nanjing",
        "Dali",
        "Lhasa",
        "Dunhuang",
        "Pingyao",
        "Guilin",
        "Xiamen",
        "Qingdao",
        "Harbin",
        "Kashgar",
        "Lijiang Old Town",
    ],
]

# Room types: (type, capacity choices, weight)
ROOM_TYPES = [
    ("huddle", [2, 3, 4], 26),
    ("meeting", [6, 8, 10], 40),
    ("conference", [12, 14, 16, 20], 20),
    ("boardroom", [16, 20, 24], 6),
    ("training", [30, 40, 60, 80], 8),
]

# The organisation: divisions, each with departments, each with teams.
# division -> (job family, {department: [teams]})
ORG = {
    "Cloud & Infrastructure": (
        "Engineering",
        {
            "Compute Platform": ["Virtual Machines", "Containers", "Serverless"],
            "Storage": ["Object Storage", "Block Storage"],
            "Network": ["Load Balancing", "CDN", "Edge Network"],
            "Site Reliability": ["Monitoring", "Incident Response"],
        },
    ),
    "Collaboration Products": (
        "Engineering",
        {
            "Meeting Client": ["Desktop Client", "Mobile Client", "Web Client"],
            "Audio & Video": ["Media Engine", "Codec Research"],
            "Docs & Whiteboard": ["Online Docs", "Whiteboard"],
            "Messaging": ["Chat Backend", "Notifications"],
        },
    ),
    "Product & Design": (
        "Product",
        {
            "Product Management": ["Enterprise Product", "Consumer Product"],
            "User Experience": ["Interaction Design", "Visual Design", "User Research"],
        },
    ),
    "Data & AI": (
        "Data",
        {
            "Data Platform": ["Data Warehouse", "Streaming"],
            "Applied AI": ["Speech Recognition", "Meeting Summaries", "Recommendation"],
        },
    ),
    "Sales & Customer Success": (
        "Sales",
        {
            "Enterprise Sales": ["North China Sales", "South China Sales", "Southeast Asia Sales"],
            "Customer Success": ["Onboarding", "Key Accounts"],
            "Solutions Engineering": ["Pre-sales", "Integrations"],
        },
    ),
    "Marketing": (
        "Marketing",
        {
            "Brand & Communications": ["Public Relations", "Content"],
            "Growth Marketing": ["Campaigns", "Partnerships"],
        },
    ),
    "Corporate Functions": (
        "Operations",
        {
            "Finance": ["Accounting", "Financial Planning"],
            "People": ["Recruiting", "People Operations", "Learning & Development"],
            "Legal & Compliance": ["Legal", "Compliance"],
            "IT & Workplace": ["IT Support", "Workplace Services"],
        },
    ),
}

# Titles by job family, from junior to senior (index grows with level).
TITLES = {
    "Engineering": [
        "Software Engineer",
        "Software Engineer II",
        "Senior Software Engineer",
        "Staff Engineer",
        "Principal Engineer",
        "QA Engineer",
        "Test Engineer",
        "DevOps Engineer",
        "Site Reliability Engineer",
    ],
    "Product": [
        "Associate Product Manager",
        "Product Manager",
        "Senior Product Manager",
        "Product Designer",
        "Senior Product Designer",
        "UX Researcher",
        "Product Operations Specialist",
    ],
    "Data": [
        "Data Analyst",
        "Data Engineer",
        "Senior Data Engineer",
        "Machine Learning Engineer",
        "Research Scientist",
        "Senior Research Scientist",
    ],
    "Sales": [
        "Sales Representative",
        "Account Executive",
        "Senior Account Executive",
        "Solutions Architect",
        "Customer Success Manager",
        "Sales Operations Analyst",
    ],
    "Marketing": [
        "Marketing Specialist",
        "Content Strategist",
        "Senior Marketing Manager",
        "Growth Analyst",
        "PR Manager",
        "Event Coordinator",
    ],
    "Operations": [
        "Accountant",
        "Financial Analyst",
        "Recruiter",
        "HR Business Partner",
        "Legal Counsel",
        "Compliance Officer",
        "IT Support Specialist",
        "Office Administrator",
        "Training Specialist",
    ],
}

HEAD_TITLES = {
    "company": "Chief Executive Officer",
    "division": "Vice President, {name}",
    "department": "Director, {name}",
    "team": "{name} Lead",
}

# Meeting titles: {team}, {topic}, {project}, {quarter}, {customer}, {person} are filled in.
PROJECTS = [
    "Aurora",
    "Beacon",
    "Cobalt",
    "Delta",
    "Ember",
    "Falcon",
    "Granite",
    "Harbor",
    "Iris",
    "Jade",
    "Kite",
    "Lantern",
    "Meridian",
    "Nimbus",
    "Onyx",
    "Phoenix",
    "Quartz",
    "Redwood",
    "Sparrow",
    "Tundra",
]
CUSTOMERS = [
    "Huaxin Bank",
    "Sunrise Logistics",
    "Pearl Insurance",
    "Greenfield Retail",
    "Lotus Hospitals",
    "Dragon Motors",
    "Summit Education",
    "Evergreen Energy",
    "Golden Gate Securities",
    "Nanyang Foods",
    "Harmony Telecom",
    "Oriental Airlines",
]
TOPICS = [
    "Q4 roadmap",
    "release readiness",
    "incident review",
    "budget planning",
    "hiring plan",
    "API design",
    "launch checklist",
    "customer feedback",
    "OKR check-in",
    "architecture review",
    "security audit",
    "pricing update",
    "performance tuning",
    "data migration",
    "onboarding flow",
    "quarterly business review",
    "capacity planning",
    "design critique",
    "sprint demo",
    "compliance training",
]

RECURRING_TITLES = [
    "{team} weekly sync",
    "{team} stand-up",
    "{team} sprint planning",
    "{team} retrospective",
    "1:1 {person}",
    "{project} weekly status",
    "{team} bi-weekly demo",
    "{team} monthly review",
]
ONE_OFF_TITLES = [
    "{topic} - {team}",
    "{project}: {topic}",
    "{customer} {topic}",
    "Kick-off: project {project}",
    "{project} design review",
    "Interview debrief",
    "{customer} account review",
    "{topic} workshop",
    "Brainstorm: {project} next steps",
    "{quarter} planning",
    "Postmortem: {project} outage",
    "{team} offsite prep",
    "Cross-team sync: {project}",
    "Vendor call: {customer}",
    "{topic} follow-up",
]
ALL_HANDS_TITLES = ["{division} all-hands", "{quarter} town hall", "{division} quarterly review", "Tech talk: {topic}"]

AGENDA_LINES = [
    "Review action items from last time",
    "Walk through the latest metrics",
    "Decide on the open questions",
    "Demo of the current build",
    "Risks and blockers",
    "Agree on owners and deadlines",
    "Customer feedback round",
    "Timeline check",
    "Budget and headcount",
    "Next steps",
    "Q&A",
    "Open discussion",
]
CANCEL_REASONS = [
    "Organiser is travelling",
    "Rescheduled",
    "No longer needed",
    "Conflicts with the all-hands",
    "Key people unavailable",
    "Merged into another meeting",
]

BOOKING_PURPOSES = [
    "Interview",
    "Customer call",
    "Focus work",
    "Phone call",
    "Workshop prep",
    "Training session",
    "Team lunch & learn",
    "Vendor demo",
    "Recording a webinar",
    "Quiet room for a call",
    "Pair programming",
    "Candidate presentation",
    "Board prep",
]

# Personal schedule entries: kind -> (titles, durations in minutes, private share)
PERSONAL_ENTRIES = {
    "focus": (["Focus time", "Deep work", "No meetings - writing", "Heads-down coding", "Review pull requests"], [60, 90, 120, 180], 0.1),
    "travel": (["Flight to {city}", "Train to {city}", "Customer visit in {city}", "Trip to the {city} office"], [180, 240, 360, 480], 0.2),
    "leave": (["Annual leave", "Sick leave", "Personal day", "Family leave"], [480], 0.6),
    "personal": (["Doctor's appointment", "School pick-up", "Gym", "Lunch with a friend", "Bank errand", "Dentist"], [30, 60, 90], 0.9),
    "training": (
        ["Leadership training", "Security awareness course", "Presentation skills", "Data privacy training", "English class"],
        [60, 90, 120],
        0.1,
    ),
}

CHAT_PROJECT_NAMES = [
    "Project {project}",
    "{project} launch war room",
    "{customer} deal room",
    "{project} tiger team",
    "{topic} working group",
    "{project} x {project2}",
]
CHAT_SOCIAL_NAMES = [
    "Badminton club",
    "Board games night",
    "Running club {city}",
    "Photography",
    "Foodies of {city}",
    "Book club",
    "Hiking {city}",
    "Parents' corner",
    "Coffee lovers",
    "Guitar & music",
    "Table tennis",
    "New joiners {year}",
    "Language exchange",
    "Pet lovers",
]
CHAT_DESCRIPTIONS = {
    "department": "Official chat of {name}.",
    "project": "Working chat for {name}.",
    "social": "Just for fun: {name}.",
    "announcement": "Announcements for {name}; please keep replies short.",
}

MESSAGE_TEMPLATES = [
    "Morning all, quick reminder about {topic} today.",
    "Can someone take a look at the {project} dashboard?",
    "Thanks, that helps a lot!",
    "I'll be a few minutes late.",
    "Shared the notes from {topic}.",
    "Who owns the {topic} follow-up?",
    "Great job on {project}, everyone!",
    "Any update on {customer}?",
    "Let's move this to a meeting.",
    "+1",
    "Done, please check.",
    "Sorry, I missed this. Looking now.",
    "Is the {project} build green?",
    "Lunch at 12:15?",
    "Reminder: timesheets are due Friday.",
    "Welcome to the group!",
    "Can we push {topic} to next week?",
    "Draft is ready for review.",
    "Uploading the slides now.",
    "Heads-up: the {room} room projector is broken.",
    "Agreed.",
    "I'll take the action item.",
    "What's the deadline for {topic}?",
    "Congrats on the launch!",
]
FILE_NAMES = [
    "{project}_roadmap.pdf",
    "{topic}_notes.docx",
    "Q{q}_report.xlsx",
    "{project}_architecture.png",
    "{customer}_proposal.pptx",
    "minutes_{day}.docx",
    "budget_{year}.xlsx",
]
