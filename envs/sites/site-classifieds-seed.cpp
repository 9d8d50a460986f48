// site-classifieds-seed.cpp: the classifieds schema and its deterministic seed data:
// a fixed category tree and catalogue of item kinds, and from the seed: users, 240
// listings (title, description, price, condition, location, date, photo alt text) and
// messages. Only seed_rng draws; same seed -> same rows.
#include <algorithm>
#include <cctype>

#include "picture-seed.h"
#include "seed-data.h"
#include "site-auth.h"
#include "site-classifieds.h"

namespace kvarena::sites {
namespace classifieds {

const std::vector<condition_def>& conditions() {
  static const std::vector<condition_def> v = {
      {"new", "New"}, {"like-new", "Like new"}, {"used", "Used"}, {"for-parts", "For parts"}};
  return v;
}

std::string condition_label(std::string_view value) {
  for (const auto& c : conditions())
    if (value == c.value) return c.label;
  return "";
}

}  // namespace classifieds

namespace {

struct product {
  const char* title;
  int lo_dollars, hi_dollars;
};
struct leaf_def {
  const char* slug;
  const char* name;
  bool has_year;  // titles start with a model year (vehicles)
  std::vector<product> products;
  std::vector<const char*> features;
};
struct top_def {
  const char* slug;
  const char* name;
  std::vector<leaf_def> leaves;
};

const std::vector<top_def>& catalogue() {
  static const std::vector<top_def> v = {
      {"vehicles", "Vehicles",
       {{"cars", "Cars", true,
         {{"Honda Civic", 4500, 18000}, {"Toyota Corolla", 4000, 17000}, {"Ford F-150", 9000, 32000},
          {"Subaru Outback", 6000, 24000}, {"Toyota Camry", 5000, 26000}, {"Jeep Wrangler", 12000, 30000},
          {"Honda CR-V", 7000, 27000}, {"Chevrolet Malibu", 3500, 15000}},
         {"Clean title, no accidents", "New tires last spring", "Oil changed every 5,000 miles",
          "Heated seats and backup camera", "Two sets of keys included", "Some scratches on the rear bumper"}},
        {"motorcycles", "Motorcycles", true,
         {{"Honda Shadow 750", 2500, 6000}, {"Suzuki SV650", 3000, 7000}, {"Kawasaki Ninja 650", 3000, 7500},
          {"Harley-Davidson Sportster", 5000, 9500}, {"Vespa scooter", 1500, 4000}},
         {"Garage kept", "Low miles", "New battery", "Comes with a helmet", "Serviced this year"}},
        {"bicycles", "Bicycles", false,
         {{"Trek road bike", 250, 1400}, {"Specialized mountain bike", 300, 1600}, {"Kids bike 20 inch", 40, 150},
          {"Electric commuter bike", 600, 2200}, {"Vintage steel touring bike", 150, 600},
          {"Folding city bike", 120, 500}},
         {"Shimano gears shift smoothly", "New brake pads", "Fits riders 5'6\" to 6'0\"", "Includes lights and a lock",
          "Tubeless tires"}},
        {"auto-parts", "Auto Parts", false,
         {{"Set of 4 winter tires", 150, 600}, {"Roof cargo box", 120, 450}, {"Car battery charger", 25, 90},
          {"Bike rack for hitch", 80, 300}, {"Floor mats set", 20, 80}},
         {"Fits most sedans and SUVs", "Used one season", "All hardware included", "Original packaging"}}}},
      {"electronics", "Electronics",
       {{"phones", "Cell Phones", false,
         {{"iPhone 13 128GB", 300, 520}, {"Samsung Galaxy S22", 250, 480}, {"Google Pixel 7", 220, 420},
          {"iPhone SE", 120, 260}},
         {"Unlocked for all carriers", "Battery health 89%", "Screen protector since day one", "Comes with a case"}},
        {"computers", "Computers", false,
         {{"MacBook Air M1", 500, 850}, {"Dell XPS 13 laptop", 400, 900}, {"Gaming PC with RTX 3060", 700, 1300},
          {"27 inch 4K monitor", 150, 380}, {"Mechanical keyboard", 40, 140}, {"iPad Air", 250, 480}},
         {"16 GB RAM, 512 GB SSD", "Fresh install of the operating system", "Charger included",
          "No dead pixels", "Original box"}},
        {"tv-audio", "TV & Audio", false,
         {{"55 inch Samsung smart TV", 220, 520}, {"Sonos One speaker", 90, 170}, {"Bose QuietComfort headphones", 120, 260},
          {"Yamaha AV receiver", 120, 380}, {"Vinyl record player", 60, 240}},
         {"Remote included", "Wall mount included", "Works perfectly", "Bluetooth and Wi-Fi"}},
        {"cameras", "Cameras", false,
         {{"Canon EOS Rebel T7 kit", 280, 480}, {"Sony a6000 mirrorless camera", 300, 520}, {"GoPro Hero 9", 150, 280},
          {"Nikon 50mm f/1.8 lens", 90, 180}, {"Camera tripod", 25, 110}},
         {"Low shutter count", "Two batteries and a charger", "Lens cap and strap included", "No scratches on the glass"}},
        {"video-games", "Video Games", false,
         {{"Nintendo Switch OLED", 220, 320}, {"PlayStation 5", 350, 480}, {"Xbox Series S", 180, 260},
          {"Bundle of 10 Switch games", 120, 250}, {"Retro NES console", 60, 160}},
         {"Two controllers included", "All cables included", "Games in original cases", "Works great"}}}},
      {"furniture", "Furniture",
       {{"sofas-chairs", "Sofas & Chairs", false,
         {{"Sectional sofa", 250, 900}, {"Leather recliner", 120, 450}, {"Mid-century armchair", 90, 350},
          {"Futon", 60, 200}, {"Set of 4 dining chairs", 80, 300}},
         {"Pet-free and smoke-free home", "Cushions recently cleaned", "Must pick up, no delivery", "Solid wood frame"}},
        {"tables-desks", "Tables & Desks", false,
         {{"Oak dining table", 150, 600}, {"Standing desk", 150, 420}, {"Glass coffee table", 40, 160},
          {"IKEA writing desk", 30, 110}, {"Round bistro table", 40, 140}},
         {"Seats six", "Adjustable height", "Minor wear on the top", "Easy to take apart for transport"}},
        {"beds-mattresses", "Beds & Mattresses", false,
         {{"Queen bed frame", 80, 350}, {"King mattress", 150, 600}, {"Bunk bed", 120, 380},
          {"Twin mattress", 50, 180}},
         {"Always used with a mattress protector", "Headboard included", "Slats in great shape", "Bought last year"}},
        {"storage-shelving", "Storage & Shelving", false,
         {{"Tall bookshelf", 30, 140}, {"Dresser with 6 drawers", 80, 320}, {"TV stand", 40, 180},
          {"Shoe cabinet", 25, 90}},
         {"Solid wood", "Drawers slide smoothly", "Anchors to the wall included", "Some marks on one side"}}}},
      {"clothing", "Clothing",
       {{"mens-clothing", "Men's Clothing", false,
         {{"Men's wool winter coat", 40, 160}, {"Men's suit 40R", 60, 220}, {"Patagonia fleece jacket", 35, 90},
          {"Levi's 501 jeans", 15, 45}},
         {"Dry cleaned", "Worn twice", "Size large", "Tags still attached"}},
        {"womens-clothing", "Women's Clothing", false,
         {{"Women's down parka", 50, 180}, {"Summer dress", 15, 60}, {"Leather jacket", 50, 200},
          {"Yoga pants set", 15, 50}},
         {"Size medium", "Worn once to a wedding", "Machine washable", "No stains or tears"}},
        {"shoes", "Shoes", false,
         {{"Nike running shoes", 25, 90}, {"Dr. Martens boots", 50, 130}, {"Hiking boots", 35, 120},
          {"Adidas sneakers", 20, 80}},
         {"Size 9", "Size 10.5", "Barely worn", "Cleaned and deodorized"}},
        {"accessories", "Bags & Accessories", false,
         {{"Leather backpack", 30, 120}, {"Ray-Ban sunglasses", 40, 110}, {"Wristwatch", 60, 300},
          {"Designer handbag", 80, 400}},
         {"Authentic, with receipt", "Gently used", "Comes with dust bag", "Adjustable strap"}}}},
      {"sports", "Sports & Outdoors",
       {{"fitness", "Fitness", false,
         {{"Adjustable dumbbells", 120, 350}, {"Treadmill", 200, 800}, {"Spin bike", 150, 600},
          {"Yoga mat and blocks", 10, 40}, {"Rowing machine", 200, 700}},
         {"Folds for storage", "Barely used", "Manual included", "Heavy, bring a helper"}},
        {"camping-hiking", "Camping & Hiking", false,
         {{"4-person tent", 60, 220}, {"Down sleeping bag", 50, 180}, {"Hiking backpack 50L", 60, 190},
          {"Camping stove", 25, 90}, {"Kayak with paddle", 250, 700}},
         {"Used on two trips", "Waterproof", "Packs small", "All stakes and poles included"}},
        {"winter-sports", "Winter Sports", false,
         {{"Snowboard with bindings", 120, 380}, {"Downhill skis 170cm", 100, 350}, {"Ski boots size 27", 60, 200},
          {"Ice skates", 25, 90}},
         {"Freshly waxed", "Edges sharpened", "Helmet included", "Used one season"}},
        {"team-sports", "Team Sports", false,
         {{"Baseball glove", 20, 90}, {"Basketball hoop", 80, 300}, {"Soccer goal set", 40, 150},
          {"Hockey stick", 30, 120}},
         {"Youth size", "Adult size", "Ready to use", "Some wear, works fine"}}}},
      {"home-garden", "Home & Garden",
       {{"appliances", "Appliances", false,
         {{"Stainless steel refrigerator", 300, 900}, {"Front-load washer", 200, 650}, {"Microwave oven", 30, 110},
          {"Dyson vacuum", 120, 320}, {"Window air conditioner", 90, 260}},
         {"Energy efficient", "Works perfectly", "Moving sale", "Manual included"}},
        {"tools", "Tools", false,
         {{"DeWalt cordless drill", 60, 150}, {"Table saw", 180, 500}, {"Socket wrench set", 30, 90},
          {"Pressure washer", 90, 260}, {"Ladder 8 ft", 40, 120}},
         {"Two batteries and charger", "Case included", "Lightly used", "Everything works"}},
        {"garden-outdoor", "Garden & Outdoor", false,
         {{"Gas lawn mower", 100, 350}, {"Patio dining set", 150, 600}, {"Charcoal grill", 40, 200},
          {"Raised garden bed", 30, 120}, {"Leaf blower", 50, 160}},
         {"Starts on the first pull", "Cover included", "Rust-free", "Pick up from the garage"}},
        {"kitchen", "Kitchen", false,
         {{"KitchenAid stand mixer", 150, 320}, {"Espresso machine", 120, 450}, {"Cast iron pan set", 30, 90},
          {"Instant Pot", 40, 90}, {"Set of dinner plates", 20, 70}},
         {"All attachments included", "Descaled and cleaned", "Service for eight", "Like the day I bought it"}}}},
      {"hobbies", "Hobbies",
       {{"musical-instruments", "Musical Instruments", false,
         {{"Fender Stratocaster guitar", 400, 900}, {"Yamaha digital piano", 300, 800}, {"Acoustic guitar", 80, 350},
          {"Drum kit", 250, 700}, {"Violin 4/4", 120, 450}},
         {"Recently set up by a luthier", "Stand and bench included", "Hard case included", "Great for beginners"}},
        {"books", "Books", false,
         {{"Box of 30 mystery novels", 20, 60}, {"Harry Potter hardcover set", 60, 140},
          {"College textbooks (calculus, physics)", 40, 150}, {"Cookbook collection", 15, 50}},
         {"Good condition, no markings", "Smoke-free home", "Some dog-eared pages", "First editions"}},
        {"toys-games", "Toys & Games", false,
         {{"LEGO Star Wars set", 40, 200}, {"Board game bundle", 20, 70}, {"Wooden train set", 25, 80},
          {"Dollhouse with furniture", 40, 150}},
         {"All pieces included", "From a pet-free home", "Instructions included", "Great gift"}}}},
  };
  return v;
}

const std::vector<const char*> kColors = {"black", "white", "silver", "gray", "red", "blue", "green", "brown"};
const std::vector<const char*> kReasons = {
    "Moving out of state and cannot take it with me.", "Upgraded to a newer model.", "No longer needed.",
    "Making room in the garage.", "Selling for a family member.", "Downsizing to a smaller apartment."};
const std::vector<const char*> kMessageTemplates = {
    "Hi, is the %s still available?", "Would you take a lower offer for the %s?",
    "Can I come see the %s this weekend?", "Is the price of the %s negotiable?",
    "Could you send more details about the %s?"};

std::string condition_sentence(std::string_view c) {
  if (c == "new") return "Brand new, never used, still in the original packaging.";
  if (c == "like-new") return "In like-new condition, used only a handful of times.";
  if (c == "used") return "Used, in good working condition with normal signs of wear.";
  return "Sold for parts or repair: it does not work as is.";
}

void create_schema(sqlite_db& db) {
  create_users_table(db);
  create_categories_table(db);
  db.exec(R"sql(
    CREATE TABLE listings (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      seller_id INTEGER NOT NULL REFERENCES users(id),
      category_id INTEGER NOT NULL REFERENCES categories(id),
      title TEXT NOT NULL,
      description TEXT NOT NULL,
      price_cents INTEGER NOT NULL CHECK (price_cents >= 0),
      condition TEXT NOT NULL,   -- new | like-new | used | for-parts
      location TEXT NOT NULL,    -- "Pittsburgh, PA"
      posted_at TEXT NOT NULL,   -- "2024-03-05 14:07", the seeded calendar
      image_alt TEXT             -- NULL: no photo
    );
    CREATE INDEX listings_category ON listings(category_id);
    CREATE INDEX listings_seller ON listings(seller_id);
    CREATE TABLE messages (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      listing_id INTEGER NOT NULL,     -- no foreign key: messages outlive a deleted listing
      listing_title TEXT NOT NULL,     -- the title when the message was sent
      sender_id INTEGER NOT NULL REFERENCES users(id),
      recipient_id INTEGER NOT NULL REFERENCES users(id),
      body TEXT NOT NULL,
      sent_at TEXT NOT NULL
    );
  )sql");
}

struct seeded_user {
  int64_t id;
  std::string location;
};

std::vector<seeded_user> seed_users(sqlite_db& db, seed_rng& rng) {
  seeded_user_writer writer(db);
  std::vector<seeded_user> users;
  auto add = [&](const std::string& first, const std::string& last, const std::string& location) {
    users.push_back({writer.add(rng, first, last, location), location});
  };
  add("Blake", "Sullivan", "Pittsburgh, PA");  // the fixed account tasks log in as
  while (int(users.size()) < classifieds::kSeedUsers) {
    // One draw per statement: argument evaluation order differs between compilers.
    std::string first = rng.pick(first_names());
    std::string last = rng.pick(last_names());
    add(first, last, rng.pick(us_cities()).label());
  }
  return users;
}

// A price in the product's range, rounded like people do; vehicles (year > 0) cost more
// the newer they are.
int64_t nice_price_cents(seed_rng& rng, const product& p, std::string_view condition, int64_t year) {
  int64_t dollars = rng.uniform(p.lo_dollars, p.hi_dollars);
  if (year > 0) {
    int64_t base = p.lo_dollars + (p.hi_dollars - p.lo_dollars) * (year - 2008) / 15;
    dollars = std::clamp<int64_t>(base * rng.uniform(85, 115) / 100, p.lo_dollars, p.hi_dollars);
  }
  if (condition == "for-parts") dollars = std::max<int64_t>(1, dollars / 4);
  int64_t step = dollars >= 1000 ? 50 : dollars >= 100 ? 5 : 1;
  dollars = std::max<int64_t>(step, dollars / step * step);
  return dollars * 100;
}

}  // namespace

void site_classifieds::seed(sqlite_db& db, uint64_t seed) const {
  create_schema(db);
  seed_rng rng(seed, /*stream=*/0x636c6173);  // "clas"
  auto users = seed_users(db, rng);
  auto leaves = seed_category_tree(db, catalogue());  // (leaf id, definition), in catalogue order

  // Posting times, oldest first, so ids grow with time like a real site.
  std::vector<int64_t> minutes(classifieds::kSeedListings);
  for (auto& m : minutes) m = rng.uniform(0, kSeedNowMinutes - 24 * 60);
  std::sort(minutes.begin(), minutes.end());

  auto ins = db.prepare(
      "INSERT INTO listings (id, seller_id, category_id, title, description, price_cents, condition, location, "
      "posted_at, image_alt) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
  std::vector<std::pair<int64_t, std::string>> listing_titles;  // (seller, title) by id - 1
  std::vector<listing_picture_source> pictures;                 // drawn after, from their own stream
  for (int i = 0; i < classifieds::kSeedListings; ++i) {
    int64_t id = i + 1;
    const auto& [category_id, leaf] = leaves[rng.index(leaves.size())];
    const product& p = rng.pick(leaf->products);
    const char* color = rng.pick(kColors);
    // User 1 sells every 40th listing, so "my listings" is never empty.
    const seeded_user& seller = i % 40 == 7 ? users[0] : users[1 + rng.index(users.size() - 1)];
    std::string condition = leaf->has_year ? (rng.chance(0.9) ? "used" : "like-new")
                                           : classifieds::conditions()[rng.index(classifieds::conditions().size())].value;
    if (condition == "for-parts" && rng.chance(0.5)) condition = "used";  // keep "for parts" rare

    int64_t year = leaf->has_year ? rng.uniform(2008, 2023) : 0;
    std::string title = p.title;
    if (year > 0) title = std::to_string(year) + " " + title;
    if (rng.chance(0.45)) title += std::string(" - ") + char(std::toupper(color[0])) + (color + 1);
    std::string location = rng.chance(0.8) ? seller.location : rng.pick(us_cities()).label();

    size_t f1 = rng.index(leaf->features.size());
    size_t f2 = (f1 + 1 + rng.index(leaf->features.size() - 1)) % leaf->features.size();
    std::string description = "For sale: " + std::string(p.title) + " in " + color + ". " + condition_sentence(condition) +
                              "\n" + leaf->features[f1] + ". " + leaf->features[f2] + ".\n" +
                              "Pickup in " + location.substr(0, location.find(',')) + ". " + rng.pick(kReasons);
    sql_value image_alt = nullptr;
    if (rng.chance(0.8)) image_alt = "Photo of a " + std::string(color) + " " + lower_ascii(p.title);

    ins.bind_all({id, seller.id, category_id, title, description, nice_price_cents(rng, p, condition, year), condition,
                  location, seed_datetime(minutes[size_t(i)]), image_alt});
    ins.step();
    ins.reset();
    listing_titles.emplace_back(seller.id, title);
    pictures.push_back({id, color, leaf->slug, !std::holds_alternative<std::nullptr_t>(image_alt)});
  }

  seed_listing_pictures(db, seed, pictures);

  // Messages about listings, a couple to user 1's listings first.
  auto msg = db.prepare(
      "INSERT INTO messages (listing_id, listing_title, sender_id, recipient_id, body, sent_at) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  for (int i = 0; i < 36; ++i) {
    int64_t listing = i < 6 ? 8 + 40 * i : int64_t(rng.index(listing_titles.size())) + 1;
    const auto& [seller_id, title] = listing_titles[size_t(listing - 1)];
    int64_t sender = 1 + int64_t(rng.index(users.size()));
    if (sender == seller_id) sender = sender % int64_t(users.size()) + 1;
    int64_t sent = std::max(minutes[size_t(listing - 1)] + rng.uniform(30, 7 * 24 * 60), int64_t(0));
    msg.bind_all({listing, title, sender, seller_id, replace_s(rng.pick(kMessageTemplates), title),
                  seed_datetime(std::min(sent, kSeedNowMinutes - 60))});
    msg.step();
    msg.reset();
  }
}

}  // namespace kvarena::sites
