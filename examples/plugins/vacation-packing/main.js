// Vacation packing — an example sidenote plugin.
//
// Registers one tool, plan_trip_packing, that turns "5 days in the Lake District with my dog"
// into a packing list: categories, quantities scaled by the number of days, weather gear from
// a small table of regions, extras for a dog (or kids), and one picture per item.
//
// Pictures: when the plugin setting imageBaseUrl is set, each item's picture is fetched from
// <imageBaseUrl>/<item-id>.png through joplin.net.fetch (the host performs the request, and
// only to hosts listed in manifest.json's permissions.net). When it is not set (the default),
// not permitted, or the request fails, the item gets a generated SVG thumbnail instead — so a
// fresh install makes no network request at all.

'use strict';

// ---- the region table ---------------------------------------------------------------------

const REGIONS = [
  {
    id: 'uk-uplands',
    name: 'British uplands',
    match: ['lake district', 'the lakes', 'cumbria', 'peak district', 'snowdonia', 'eryri', 'highlands',
      'scotland', 'yorkshire dales', 'cairngorms', 'brecon', 'dartmoor', 'exmoor', 'northumberland', 'wales'],
    climate: 'cool and wet, changeable',
    tempC: [6, 16],
    wet: true,
    weather: [
      ['waterproof-jacket', 1], ['waterproof-trousers', 1], ['fleece', 1], ['walking-boots', 1],
      ['warm-hat', 1], ['gloves', 1],
    ],
  },
  {
    id: 'alpine',
    name: 'Alpine mountains',
    match: ['alps', 'chamonix', 'zermatt', 'dolomites', 'tyrol', 'switzerland', 'pyrenees', 'austria'],
    climate: 'cold nights, strong sun at altitude',
    tempC: [2, 20],
    wet: false,
    weather: [
      ['insulated-jacket', 1], ['fleece', 1], ['walking-boots', 1], ['sunglasses', 1], ['sun-cream', 1],
      ['warm-hat', 1],
    ],
  },
  {
    id: 'mediterranean',
    name: 'Mediterranean coast',
    match: ['spain', 'mallorca', 'majorca', 'ibiza', 'greece', 'crete', 'italy', 'amalfi', 'sicily',
      'portugal', 'algarve', 'croatia', 'cyprus', 'provence', 'malta', 'sardinia', 'corsica'],
    climate: 'hot and dry',
    tempC: [20, 32],
    wet: false,
    weather: [['sun-hat', 1], ['sunglasses', 1], ['sun-cream', 1], ['sandals', 1], ['swimwear', 2]],
  },
  {
    id: 'tropical',
    name: 'Tropics',
    match: ['thailand', 'bali', 'caribbean', 'maldives', 'costa rica', 'vietnam', 'philippines', 'mexico',
      'cancun', 'jamaica', 'sri lanka', 'malaysia', 'singapore'],
    climate: 'hot and humid, sudden showers',
    tempC: [24, 33],
    wet: true,
    weather: [
      ['sun-hat', 1], ['sunglasses', 1], ['sun-cream', 1], ['insect-repellent', 1], ['light-rain-jacket', 1],
      ['sandals', 1], ['swimwear', 2],
    ],
  },
  {
    id: 'nordic',
    name: 'Nordic north',
    match: ['iceland', 'norway', 'lapland', 'finland', 'sweden', 'faroe', 'greenland', 'svalbard', 'tromso'],
    climate: 'cold, windy and changeable',
    tempC: [-5, 12],
    wet: true,
    weather: [
      ['insulated-jacket', 1], ['waterproof-trousers', 1], ['thermal-layers', 2], ['walking-boots', 1],
      ['warm-hat', 1], ['gloves', 1],
    ],
  },
  {
    id: 'desert',
    name: 'Desert',
    match: ['morocco', 'sahara', 'dubai', 'egypt', 'jordan', 'wadi rum', 'arizona', 'nevada', 'namibia'],
    climate: 'hot days, cold nights, dry',
    tempC: [8, 35],
    wet: false,
    weather: [['sun-hat', 1], ['sunglasses', 1], ['sun-cream', 1], ['fleece', 1], ['water-bottle', 2]],
  },
];

const TEMPERATE = {
  id: 'temperate',
  name: 'Temperate (no specific data for this destination)',
  climate: 'mild and changeable',
  tempC: [8, 20],
  wet: true,
  weather: [['light-rain-jacket', 1], ['fleece', 1]],
};

// ---- the item catalogue -------------------------------------------------------------------

const ITEMS = {
  'underwear': ['Underwear', 'Clothing', '🩲'],
  'socks': ['Socks', 'Clothing', '🧦'],
  't-shirts': ['T-shirts / tops', 'Clothing', '👕'],
  'trousers': ['Trousers', 'Clothing', '👖'],
  'jumper': ['Jumper', 'Clothing', '🧶'],
  'sleepwear': ['Sleepwear', 'Clothing', '😴'],
  'toothbrush': ['Toothbrush and toothpaste', 'Toiletries', '🪥'],
  'toiletries': ['Toiletry bag', 'Toiletries', '🧴'],
  'medication': ['Medication and plasters', 'Toiletries', '💊'],
  'phone-charger': ['Phone charger', 'Documents and tech', '🔌'],
  'id-documents': ['ID, tickets and bookings', 'Documents and tech', '🪪'],
  'waterproof-jacket': ['Waterproof jacket', 'Weather gear', '🧥'],
  'waterproof-trousers': ['Waterproof trousers', 'Weather gear', '👖'],
  'light-rain-jacket': ['Light rain jacket', 'Weather gear', '🧥'],
  'insulated-jacket': ['Insulated jacket', 'Weather gear', '🧥'],
  'fleece': ['Fleece', 'Weather gear', '🧥'],
  'thermal-layers': ['Thermal base layers', 'Weather gear', '🧣'],
  'walking-boots': ['Walking boots', 'Weather gear', '🥾'],
  'warm-hat': ['Warm hat', 'Weather gear', '🧢'],
  'gloves': ['Gloves', 'Weather gear', '🧤'],
  'sun-hat': ['Sun hat', 'Weather gear', '👒'],
  'sunglasses': ['Sunglasses', 'Weather gear', '🕶️'],
  'sun-cream': ['Sun cream', 'Weather gear', '🧴'],
  'insect-repellent': ['Insect repellent', 'Weather gear', '🦟'],
  'sandals': ['Sandals', 'Weather gear', '🩴'],
  'swimwear': ['Swimwear', 'Weather gear', '🩱'],
  'water-bottle': ['Water bottle', 'Weather gear', '🚰'],
  'daypack': ['Daypack', 'Activities', '🎒'],
  'map-compass': ['Map and compass', 'Activities', '🧭'],
  'walking-poles': ['Walking poles', 'Activities', '🦯'],
  'hiking-socks': ['Hiking socks', 'Activities', '🧦'],
  'towel': ['Quick-dry towel', 'Activities', '🏖️'],
  'bike-helmet': ['Bike helmet', 'Activities', '🚲'],
  'ski-goggles': ['Ski goggles', 'Activities', '🥽'],
  'tent': ['Tent', 'Activities', '⛺'],
  'sleeping-bag': ['Sleeping bag', 'Activities', '🛏️'],
  'head-torch': ['Head torch', 'Activities', '🔦'],
  'dog-food': ['Dog food', 'For the dog', '🦴'],
  'dog-bowls': ['Food and water bowls', 'For the dog', '🥣'],
  'dog-lead': ['Lead and harness', 'For the dog', '🦮'],
  'poo-bags': ['Poo bags', 'For the dog', '🛍️'],
  'dog-towel': ['Dog towel', 'For the dog', '🧺'],
  'dog-bed': ['Dog bed or blanket', 'For the dog', '🛏️'],
  'dog-treats': ['Treats', 'For the dog', '🍪'],
  'dog-documents': ['Vaccination record and tag', 'For the dog', '📋'],
  'tick-remover': ['Tick remover', 'For the dog', '🪲'],
  'kids-snacks': ['Snacks for the kids', 'For the kids', '🍎'],
  'kids-clothes': ['Spare kids\' outfits', 'For the kids', '👚'],
  'kids-games': ['Books and games', 'For the kids', '🧩'],
};

const CATEGORY_ORDER = ['Clothing', 'Weather gear', 'Activities', 'For the dog', 'For the kids', 'Toiletries',
  'Documents and tech'];
const CATEGORY_COLOUR = {
  'Clothing': '#4f7cac', 'Weather gear': '#3a9d8f', 'Activities': '#d08c2e', 'For the dog': '#a0643c',
  'For the kids': '#c05a8a', 'Toiletries': '#7b68b5', 'Documents and tech': '#5c6b73',
};

const ACTIVITIES = {
  hiking: [['daypack', 1], ['map-compass', 1], ['walking-poles', 1], ['hiking-socks', 2], ['walking-boots', 1]],
  walking: [['daypack', 1], ['map-compass', 1], ['walking-boots', 1]],
  swimming: [['swimwear', 2], ['towel', 1]],
  beach: [['swimwear', 2], ['towel', 1], ['sun-cream', 1], ['sunglasses', 1]],
  cycling: [['bike-helmet', 1], ['daypack', 1], ['water-bottle', 1]],
  skiing: [['ski-goggles', 1], ['thermal-layers', 2], ['gloves', 1], ['insulated-jacket', 1]],
  camping: [['tent', 1], ['sleeping-bag', 1], ['head-torch', 1]],
};

// ---- planning -----------------------------------------------------------------------------

function findRegion(destination) {
  const d = destination.toLowerCase();
  return REGIONS.find((r) => r.match.some((m) => d.includes(m))) || TEMPERATE;
}

function plan(input) {
  const days = Math.max(1, Math.min(60, Math.floor(input.days)));
  const companions = (input.companions || []).map((c) => String(c).toLowerCase());
  const activities = (input.activities || []).map((a) => String(a).toLowerCase());
  const region = findRegion(String(input.destination));
  const list = new Map(); // id -> { quantity, note }
  const add = (id, quantity, note) => {
    const prev = list.get(id);
    if (prev) {
      prev.quantity = Math.max(prev.quantity, quantity);
      if (note && !prev.note) prev.note = note;
    } else {
      list.set(id, { quantity, note });
    }
  };

  add('underwear', Math.min(days + 1, 10), days > 9 ? 'plan a wash' : undefined);
  add('socks', Math.min(days + 1, 10));
  add('t-shirts', Math.min(Math.ceil(days / 2) + 1, 7));
  add('trousers', Math.max(1, Math.min(Math.ceil(days / 3), 3)));
  add('jumper', 1);
  add('sleepwear', 1);
  add('toothbrush', 1);
  add('toiletries', 1);
  add('medication', 1);
  add('phone-charger', 1);
  add('id-documents', 1);
  for (const [id, q] of region.weather) add(id, q, `for ${region.climate} weather`);

  for (const a of activities) {
    const key = Object.keys(ACTIVITIES).find((k) => a.includes(k) || k.includes(a));
    if (key) for (const [id, q] of ACTIVITIES[key]) add(id, q, `for ${key}`);
  }

  const hasDog = companions.some((c) => /\b(dog|dogs|puppy|pup)\b/.test(c));
  if (hasDog) {
    add('dog-food', days, `${days} days of meals, plus one spare`);
    add('dog-bowls', 1);
    add('dog-lead', 1);
    add('poo-bags', days * 4);
    add('dog-towel', region.wet ? 2 : 1, region.wet ? 'wet weather: muddy paws' : undefined);
    add('dog-bed', 1);
    add('dog-treats', 1);
    add('dog-documents', 1);
    if (['uk-uplands', 'alpine', 'nordic', 'temperate'].includes(region.id)) add('tick-remover', 1);
  }
  const hasKids = companions.some((c) => /\b(kid|kids|child|children|son|daughter|baby|toddler)\b/.test(c));
  if (hasKids) {
    add('kids-snacks', days);
    add('kids-clothes', Math.min(days + 1, 8));
    add('kids-games', 2);
  }

  const categories = CATEGORY_ORDER.map((name) => ({
    name,
    items: [...list.entries()]
      .filter(([id]) => ITEMS[id][1] === name)
      .map(([id, v]) => {
        const item = { id, label: ITEMS[id][0], quantity: v.quantity };
        if (v.note) item.note = v.note;
        return item;
      }),
  })).filter((c) => c.items.length > 0);

  return {
    destination: String(input.destination),
    days,
    companions: input.companions || [],
    activities: input.activities || [],
    region: { id: region.id, name: region.name, climate: region.climate, typical_temperature_c: region.tempC },
    categories,
    total_items: categories.reduce((n, c) => n + c.items.length, 0),
  };
}

// ---- pictures -----------------------------------------------------------------------------

// Fetched pictures by item id (data: URLs), kept for render(); the model never sees them.
const pictures = new Map();

async function fetchPictures(result) {
  const base = String((await joplin.settings.value('imageBaseUrl')) || '').trim().replace(/\/+$/, '');
  const ids = result.categories.flatMap((c) => c.items.map((i) => i.id));
  pictures.clear();
  if (!base) {
    return { source: 'generated', note: 'No imageBaseUrl set: generated thumbnails, no network request.' };
  }
  let fetched = 0;
  let firstError;
  await Promise.all(ids.map(async (id) => {
    try {
      const r = await joplin.net.fetch(`${base}/${encodeURIComponent(id)}.png`);
      if (!r.ok) throw new Error(`HTTP ${r.status} for ${id}.png`);
      if (!/^image\//.test(r.contentType || '')) throw new Error(`${id}.png is not an image (${r.contentType})`);
      pictures.set(id, await r.dataUrl());
      fetched += 1;
    } catch (e) {
      pictures.delete(id);
      if (!firstError) firstError = e.message;
    }
  }));
  const out = { source: fetched === ids.length ? 'fetched' : fetched > 0 ? 'partly fetched' : 'generated', fetched };
  if (firstError) out.note = `Some pictures could not be fetched (${firstError}); generated thumbnails stand in.`;
  return out;
}

function svgThumbnail(item, category) {
  const colour = CATEGORY_COLOUR[category] || '#666';
  const emoji = (ITEMS[item.id] || [])[2] || item.label.slice(0, 1);
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64">` +
    `<rect width="64" height="64" rx="12" fill="${colour}"/>` +
    `<text x="32" y="42" font-size="30" text-anchor="middle">${emoji}</text></svg>`;
  return `data:image/svg+xml;utf8,${encodeURIComponent(svg)}`;
}

// ---- the tool -----------------------------------------------------------------------------

joplin.ai.tools.register({
  id: 'plan_trip_packing',
  description:
    'Plan what to pack for a trip: a packing list by category with quantities scaled to the ' +
    'number of days, weather gear for the destination\'s climate, and extras for companions ' +
    'such as a dog or kids. Use it whenever the user asks what to pack or bring for a trip, ' +
    'holiday or vacation.',
  inputSchema: {
    type: 'object',
    properties: {
      destination: { type: 'string', minLength: 1, description: 'Where the trip goes, e.g. "Lake District".' },
      days: { type: 'integer', minimum: 1, maximum: 60, description: 'Length of the trip in days.' },
      companions: {
        type: 'array',
        items: { type: 'string' },
        description: 'Who comes along besides the user, e.g. ["dog"] or ["partner", "kids"]; [] when travelling alone.',
      },
      activities: {
        type: 'array',
        items: { type: 'string' },
        description: 'Optional: hiking, walking, swimming, beach, cycling, skiing, camping.',
      },
    },
    required: ['destination', 'days', 'companions'],
    additionalProperties: false,
  },

  async handler(input) {
    const result = plan(input);
    result.pictures = await fetchPictures(result);
    return result;
  },

  render(input, output) {
    const header = {
      type: 'text',
      text: `**Packing for ${output.destination}** — ${output.days} day${output.days === 1 ? '' : 's'}, ` +
        `${output.region.climate} (${output.region.typical_temperature_c[0]}–${output.region.typical_temperature_c[1]} °C)`,
    };
    const lists = output.categories.map((c) => ({
      type: 'list',
      title: c.name,
      items: c.items.map((i) => {
        const entry = {
          label: i.label,
          badge: `×${i.quantity}`,
          thumbnail: pictures.get(i.id) || svgThumbnail(i, c.name),
          checkbox: false,
        };
        if (i.note) entry.description = i.note;
        return entry;
      }),
    }));
    return { version: 1, type: 'stack', children: [header, ...lists] };
  },
});
