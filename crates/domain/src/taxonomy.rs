//! The categories a transaction can have: a fixed top level (what the wire's
//! `category` carries, by name) and a second level of stable ids (what
//! `subcategory` carries). docs/enrichment.md lists both; an id, once
//! shipped, is never renamed or reused (a test compares this table with the
//! document).

use std::fmt;

/// The top level of the taxonomy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    Income,
    Transfer,
    FoodAndDrink,
    Groceries,
    Shopping,
    Transport,
    Travel,
    Housing,
    Utilities,
    TelecomAndInternet,
    Insurance,
    Health,
    Entertainment,
    Subscriptions,
    Education,
    FeesAndCharges,
    Taxes,
    Cash,
    Investments,
    Charity,
    Government,
    Other,
}

impl Category {
    pub const ALL: [Category; 22] = [
        Category::Income,
        Category::Transfer,
        Category::FoodAndDrink,
        Category::Groceries,
        Category::Shopping,
        Category::Transport,
        Category::Travel,
        Category::Housing,
        Category::Utilities,
        Category::TelecomAndInternet,
        Category::Insurance,
        Category::Health,
        Category::Entertainment,
        Category::Subscriptions,
        Category::Education,
        Category::FeesAndCharges,
        Category::Taxes,
        Category::Cash,
        Category::Investments,
        Category::Charity,
        Category::Government,
        Category::Other,
    ];

    /// The name people read, and the wire's `category`.
    pub fn name(self) -> &'static str {
        match self {
            Category::Income => "Income",
            Category::Transfer => "Transfer",
            Category::FoodAndDrink => "Food & Drink",
            Category::Groceries => "Groceries",
            Category::Shopping => "Shopping",
            Category::Transport => "Transport",
            Category::Travel => "Travel",
            Category::Housing => "Housing",
            Category::Utilities => "Utilities",
            Category::TelecomAndInternet => "Telecom & Internet",
            Category::Insurance => "Insurance",
            Category::Health => "Health",
            Category::Entertainment => "Entertainment",
            Category::Subscriptions => "Subscriptions",
            Category::Education => "Education",
            Category::FeesAndCharges => "Fees & Charges",
            Category::Taxes => "Taxes",
            Category::Cash => "Cash",
            Category::Investments => "Investments",
            Category::Charity => "Charity",
            Category::Government => "Government",
            Category::Other => "Other",
        }
    }

    /// The prefix of its subcategories' ids (`food_and_drink`).
    pub fn id(self) -> &'static str {
        match self {
            Category::Income => "income",
            Category::Transfer => "transfer",
            Category::FoodAndDrink => "food_and_drink",
            Category::Groceries => "groceries",
            Category::Shopping => "shopping",
            Category::Transport => "transport",
            Category::Travel => "travel",
            Category::Housing => "housing",
            Category::Utilities => "utilities",
            Category::TelecomAndInternet => "telecom_and_internet",
            Category::Insurance => "insurance",
            Category::Health => "health",
            Category::Entertainment => "entertainment",
            Category::Subscriptions => "subscriptions",
            Category::Education => "education",
            Category::FeesAndCharges => "fees_and_charges",
            Category::Taxes => "taxes",
            Category::Cash => "cash",
            Category::Investments => "investments",
            Category::Charity => "charity",
            Category::Government => "government",
            Category::Other => "other",
        }
    }

    /// The category of this name (the wire's spelling, as a client sends it
    /// in a rule).
    pub fn from_name(name: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.name() == name)
    }

    /// Its subcategories, in the table's order.
    pub fn subcategories(self) -> impl Iterator<Item = &'static Subcategory> {
        SUBCATEGORIES.iter().filter(move |s| s.category == self)
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// A second-level category: a stable id under its top level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Subcategory {
    /// `<category id>.<name>`, e.g. `food_and_drink.restaurants`.
    pub id: &'static str,
    pub category: Category,
    /// What it holds, in a few words.
    pub name: &'static str,
}

impl Subcategory {
    /// The subcategory of this id.
    pub fn from_id(id: &str) -> Option<&'static Subcategory> {
        SUBCATEGORIES.iter().find(|s| s.id == id)
    }
}

macro_rules! subcategories {
    ($($category:ident { $($id:literal => $name:literal),+ $(,)? })+) => {
        /// Every subcategory, grouped by category in the top level's order.
        pub const SUBCATEGORIES: &[Subcategory] = &[
            $($(Subcategory { id: $id, category: Category::$category, name: $name },)+)+
        ];
    };
}

subcategories! {
    Income {
        "income.salary" => "Salary and wages",
        "income.benefits" => "Benefits and pensions",
        "income.interest" => "Interest earned",
        "income.dividends" => "Dividends",
        "income.refunds" => "Refunds and reimbursements",
        "income.other" => "Other income",
    }
    Transfer {
        "transfer.own_accounts" => "Between one's own accounts",
        "transfer.credit_card_payment" => "Paying off a credit card",
        "transfer.to_others" => "Sent to other people",
        "transfer.from_others" => "Received from other people",
    }
    FoodAndDrink {
        "food_and_drink.restaurants" => "Restaurants",
        "food_and_drink.cafes" => "Cafés and bakeries",
        "food_and_drink.bars" => "Bars and pubs",
        "food_and_drink.fast_food" => "Fast food",
        "food_and_drink.delivery" => "Food delivery",
    }
    Groceries {
        "groceries.supermarkets" => "Supermarkets",
        "groceries.specialty" => "Butchers, markets and specialty food",
    }
    Shopping {
        "shopping.general" => "Department and general stores",
        "shopping.online" => "Online marketplaces",
        "shopping.clothing" => "Clothing and shoes",
        "shopping.electronics" => "Electronics",
        "shopping.home" => "Home, furniture and DIY",
        "shopping.other" => "Other shopping",
    }
    Transport {
        "transport.public" => "Public transport",
        "transport.taxi" => "Taxis and ride-hailing",
        "transport.fuel" => "Fuel and charging",
        "transport.parking" => "Parking and tolls",
        "transport.vehicle" => "Vehicle repairs and upkeep",
        "transport.other" => "Other transport",
    }
    Travel {
        "travel.flights" => "Flights",
        "travel.lodging" => "Hotels and lodging",
        "travel.car_rental" => "Car rental",
        "travel.other" => "Other travel",
    }
    Housing {
        "housing.rent" => "Rent",
        "housing.mortgage" => "Mortgage",
        "housing.maintenance" => "Repairs and maintenance",
        "housing.other" => "Other housing",
    }
    Utilities {
        "utilities.electricity" => "Electricity",
        "utilities.heating" => "Gas and heating",
        "utilities.water" => "Water and waste",
        "utilities.other" => "Other utilities",
    }
    TelecomAndInternet {
        "telecom_and_internet.mobile" => "Mobile phone",
        "telecom_and_internet.internet" => "Internet",
        "telecom_and_internet.tv_and_landline" => "TV and landline",
    }
    Insurance {
        "insurance.health" => "Health insurance",
        "insurance.home" => "Home and contents",
        "insurance.vehicle" => "Vehicle",
        "insurance.life" => "Life",
        "insurance.other" => "Other insurance",
    }
    Health {
        "health.pharmacy" => "Pharmacies",
        "health.doctors" => "Doctors and hospitals",
        "health.dental" => "Dentists",
        "health.fitness" => "Gyms and sport",
        "health.other" => "Other health",
    }
    Entertainment {
        "entertainment.events" => "Cinema, concerts and events",
        "entertainment.games" => "Games",
        "entertainment.hobbies" => "Hobbies",
        "entertainment.other" => "Other entertainment",
    }
    Subscriptions {
        "subscriptions.streaming" => "Video and music streaming",
        "subscriptions.software" => "Software and cloud",
        "subscriptions.news" => "News and magazines",
        "subscriptions.memberships" => "Memberships",
        "subscriptions.other" => "Other subscriptions",
    }
    Education {
        "education.tuition" => "Tuition and courses",
        "education.books" => "Books and supplies",
        "education.childcare" => "Childcare",
    }
    FeesAndCharges {
        "fees_and_charges.bank" => "Account fees",
        "fees_and_charges.interest" => "Interest charged",
        "fees_and_charges.atm" => "Cash machine fees",
        "fees_and_charges.foreign" => "Foreign transaction fees",
        "fees_and_charges.late" => "Late and penalty fees",
    }
    Taxes {
        "taxes.income" => "Income tax",
        "taxes.property" => "Property tax",
        "taxes.other" => "Other taxes",
    }
    Cash {
        "cash.withdrawal" => "Withdrawals",
        "cash.deposit" => "Deposits",
    }
    Investments {
        "investments.contributions" => "Contributions and savings plans",
        "investments.trades" => "Buying and selling",
        "investments.crypto" => "Crypto",
    }
    Charity {
        "charity.donations" => "Donations",
    }
    Government {
        "government.services" => "Government services and fees",
        "government.fines" => "Fines",
    }
    Other {
        "other.uncategorized" => "Not yet categorised",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn the_top_level_is_exactly_the_documented_list() {
        let names: Vec<&str> = Category::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(
            names,
            [
                "Income",
                "Transfer",
                "Food & Drink",
                "Groceries",
                "Shopping",
                "Transport",
                "Travel",
                "Housing",
                "Utilities",
                "Telecom & Internet",
                "Insurance",
                "Health",
                "Entertainment",
                "Subscriptions",
                "Education",
                "Fees & Charges",
                "Taxes",
                "Cash",
                "Investments",
                "Charity",
                "Government",
                "Other",
            ]
        );
        for category in Category::ALL {
            assert_eq!(Category::from_name(category.name()), Some(category));
        }
        assert_eq!(Category::from_name("food & drink"), None);
    }

    #[test]
    fn every_subcategory_id_is_unique_and_under_its_category() {
        let mut seen = HashSet::new();
        for sub in SUBCATEGORIES {
            assert!(seen.insert(sub.id), "{} twice", sub.id);
            let (prefix, rest) = sub.id.split_once('.').expect("category.name");
            assert_eq!(prefix, sub.category.id(), "{}", sub.id);
            assert!(
                !rest.is_empty()
                    && rest
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                "{}",
                sub.id
            );
            assert_eq!(Subcategory::from_id(sub.id), Some(sub));
        }
        for category in Category::ALL {
            assert!(
                category.subcategories().next().is_some(),
                "{category} has no subcategory"
            );
        }
    }

    /// The document is the promise: every id in code is in its table with
    /// the same category, and every id in the table is in code.
    #[test]
    fn the_table_in_docs_matches_the_code() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/enrichment.md");
        let text = std::fs::read_to_string(&path).expect("docs/enrichment.md");
        let documented: HashSet<(String, String)> = text
            .lines()
            .filter_map(|line| {
                let cells: Vec<&str> = line.split('|').map(str::trim).collect();
                // | Category | `id` | what |
                let id = cells.get(2)?.strip_prefix('`')?.strip_suffix('`')?;
                Some((cells.get(1)?.to_string(), id.to_owned()))
            })
            .collect();
        let coded: HashSet<(String, String)> = SUBCATEGORIES
            .iter()
            .map(|s| (s.category.name().to_owned(), s.id.to_owned()))
            .collect();
        assert_eq!(
            coded.difference(&documented).collect::<Vec<_>>(),
            Vec::<&(String, String)>::new(),
            "in code, not in docs/enrichment.md"
        );
        assert_eq!(
            documented.difference(&coded).collect::<Vec<_>>(),
            Vec::<&(String, String)>::new(),
            "in docs/enrichment.md, not in code"
        );
    }
}
