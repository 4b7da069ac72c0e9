//! Portuguese-language texts. Brazil: PIX sent and received (to people
//! and to shops), TED, `COMPRA CARTAO`, `PAGTO BOLETO`, salary credits,
//! `SAQUE`, fees, taxes and savings (`APLICACAO POUPANCA`). Portugal:
//! `COMPRA`, `DD` direct debits, `TRF` transfers and MB WAY,
//! `LEVANTAMENTO`, fees, taxes.

use super::{Gen, Party, Style, Text, p, typical_cents};
use tributary_domain::enrich::hints::CategoryHint;

const BR_SHOPS: &[Party] = &[
    p("Pão de Açúcar", "PAO DE ACUCAR", "groceries.supermarkets", 5411),
    p("Carrefour", "CARREFOUR COM IND LTDA", "groceries.supermarkets", 5411),
    p("Assaí", "ASSAI ATACADISTA", "groceries.supermarkets", 5411),
    p("iFood", "IFOOD *IFOOD", "food_and_drink.delivery", 5814),
    p("Uber", "UBER *TRIP", "transport.taxi", 4121),
    p("Drogasil", "DROGASIL", "health.pharmacy", 5912),
    p("Drogaria São Paulo", "", "health.pharmacy", 5912),
    p("Renner", "LOJAS RENNER", "shopping.clothing", 5651),
    p("Magazine Luiza", "MAGAZINE LUIZA", "shopping.electronics", 5732),
    p("Mercado Livre", "MERCADOLIVRE*VENDEDOR", "shopping.online", 5969),
    p("Posto Ipiranga", "", "transport.fuel", 5541),
    p("Shell", "SHELL BOX", "transport.fuel", 5541),
    p("Padaria Pão Quente", "", "food_and_drink.cafes", 5462),
    p("Restaurante Sabor Caseiro", "", "food_and_drink.restaurants", 5812),
    p("Farmácia Popular", "", "health.pharmacy", 5912),
    p("Açougue Boi Gordo", "", "groceries.specialty", 5422),
    p("Lanchonete do Zé", "", "food_and_drink.fast_food", 5814),
    p("Bar do Alemão", "", "food_and_drink.bars", 5813),
    p("Livraria Cultura", "", "education.books", 5942),
];

const BR_CITIES: &[&str] = &[
    "SAO PAULO",
    "RIO DE JANEIRO",
    "BELO HORIZONTE",
    "CURITIBA",
    "PORTO ALEGRE",
    "RECIFE",
];

const BR_BILLS: &[Party] = &[
    p(
        "Enel",
        "ENEL DISTRIBUICAO SAO PAULO",
        "utilities.electricity",
        0,
    ),
    p("Sabesp", "SABESP", "utilities.water", 0),
    p("Claro", "CLARO S.A.", "telecom_and_internet.mobile", 0),
    p("Vivo", "TELEFONICA BRASIL S.A.", "telecom_and_internet.mobile", 0),
    p(
        "Condomínio Edifício Aurora",
        "CONDOMINIO EDIFICIO AURORA",
        "housing.other",
        0,
    ),
    p("Unimed", "UNIMED RIO", "insurance.health", 0),
    p("Porto Seguro", "PORTO SEGURO CIA DE SEGUROS", "insurance.vehicle", 0),
    p("Colégio Santa Maria", "COLEGIO SANTA MARIA", "education.tuition", 0),
    p("Imobiliária Lar Feliz", "IMOBILIARIA LAR FELIZ LTDA", "housing.rent", 0),
];

const BR_PEOPLE: &[&str] = &[
    "João da Silva",
    "Maria Oliveira",
    "Ana Souza",
    "Pedro Santos",
    "Juliana Costa",
    "Lucas Pereira",
    "Fernanda Lima",
    "Rafael Almeida",
    "Beatriz Rodrigues",
    "Gabriel Ferreira",
];

const BR_EMPLOYERS: &[(&str, &str)] = &[
    ("Acme Brasil", "ACME BRASIL LTDA"),
    ("Construtora Horizonte", "CONSTRUTORA HORIZONTE S.A."),
    ("Prefeitura de Curitiba", "PREFEITURA DE CURITIBA"),
];

pub(super) fn brazil(g: &mut Gen) -> Text {
    #[derive(Clone, Copy)]
    enum Kind {
        Card,
        PixOut,
        PixIn,
        PixShop,
        Ted,
        Boleto,
        Salary,
        Cash,
        Fee,
        Tax,
        Savings,
    }
    let (day, month) = g.day_month();
    match g.weighted(&[
        (34, Kind::Card),
        (10, Kind::PixOut),
        (6, Kind::PixIn),
        (6, Kind::PixShop),
        (3, Kind::Ted),
        (14, Kind::Boleto),
        (6, Kind::Salary),
        (6, Kind::Cash),
        (4, Kind::Fee),
        (3, Kind::Tax),
        (4, Kind::Savings),
    ]) {
        Kind::Card => {
            let shop = *g.pick(BR_SHOPS);
            let name = shop.written(Style::Plain);
            let city = *g.pick(BR_CITIES);
            let description = match g.between(0, 2) {
                0 => format!("COMPRA CARTAO {name} {city}"),
                1 => format!("COMPRA CARTAO DEB MC {day:02}/{month:02} {name}"),
                _ => format!("COMPRA NO DEBITO - {name}"),
            };
            let text = Text::new(
                description,
                -typical_cents(g, shop.sub),
                Some(shop.name),
                shop.sub,
            );
            match g.chance(25) {
                true => text.hint(CategoryHint::Mcc(shop.mcc)),
                false => text,
            }
        }
        Kind::PixOut | Kind::PixIn => {
            let out = g.chance(60);
            let person = *g.pick(BR_PEOPLE);
            let written = match g.chance(50) {
                true => super::upper(person, Style::Accented),
                false => super::upper(person, Style::Plain),
            };
            let cents = g.between(1_000, 50_000);
            let description = match (out, g.chance(50)) {
                (true, true) => format!("PIX ENVIADO {written}"),
                (true, false) => format!("Pix enviado - {written}"),
                (false, true) => format!("PIX RECEBIDO {written}"),
                (false, false) => format!("Pix recebido - {written}"),
            };
            match out {
                true => Text::new(description, -cents, Some(person), "transfer.to_others"),
                false => Text::new(description, cents, Some(person), "transfer.from_others"),
            }
        }
        Kind::PixShop => {
            // Local shops take PIX; the name is the one registered with the
            // key, the company's.
            let locals: Vec<&Party> = BR_SHOPS.iter().filter(|s| s.text.is_empty()).collect();
            let shop = **g.pick(&locals);
            let name = super::upper(shop.name, Style::Plain);
            Text::new(
                format!("PIX ENVIADO {name} LTDA"),
                -typical_cents(g, shop.sub),
                Some(shop.name),
                shop.sub,
            )
        }
        Kind::Ted => {
            let person = *g.pick(BR_PEOPLE);
            let written = super::upper(person, Style::Plain);
            let cents = g.between(5_000, 200_000);
            match g.chance(50) {
                true => Text::new(
                    format!("TED RECEBIDA {written}"),
                    cents,
                    Some(person),
                    "transfer.from_others",
                ),
                false => Text::new(
                    format!("TED ENVIADA {} {written}", g.digits(3)),
                    -cents,
                    Some(person),
                    "transfer.to_others",
                ),
            }
        }
        Kind::Boleto => {
            let bill = *g.pick(BR_BILLS);
            let description = match g.between(0, 2) {
                0 => format!("PAGTO BOLETO {}", bill.text),
                1 => format!("PAGAMENTO DE BOLETO - {}", bill.text),
                _ => format!("PAG BOLETO {} {day:02}/{month:02}", bill.text),
            };
            Text::new(
                description,
                -typical_cents(g, bill.sub),
                Some(bill.name),
                bill.sub,
            )
        }
        Kind::Salary => {
            let (employer, written) = *g.pick(BR_EMPLOYERS);
            let description = match g.chance(50) {
                true => format!("CREDITO DE SALARIO {written}"),
                false => format!("TED RECEBIDA {written} SALARIO"),
            };
            Text::new(
                description,
                typical_cents(g, "income.salary"),
                Some(employer),
                "income.salary",
            )
        }
        Kind::Cash => {
            let description = *g.pick(&[
                "SAQUE 24H BANCO24HORAS",
                "SAQUE ATM",
                "SAQUE CAIXA ELETRONICO",
            ]);
            Text::new(
                format!("{description} {day:02}/{month:02}"),
                -typical_cents(g, "cash.withdrawal"),
                None,
                "cash.withdrawal",
            )
        }
        Kind::Fee => {
            let (description, sub) = *g.pick(&[
                ("TARIFA PACOTE SERVICOS", "fees_and_charges.bank"),
                ("TARIFA SAQUE", "fees_and_charges.atm"),
                ("IOF", "taxes.other"),
                ("ANUIDADE CARTAO", "fees_and_charges.bank"),
            ]);
            Text::new(description.to_owned(), -typical_cents(g, sub), None, sub)
        }
        Kind::Tax => {
            let (description, merchant, sub) = *g.pick(&[
                ("PAGTO DARF RECEITA FEDERAL", "Receita Federal", "taxes.income"),
                ("PAGTO IPTU PREFEITURA DE SAO PAULO", "Prefeitura de São Paulo", "taxes.property"),
            ]);
            Text::new(
                description.to_owned(),
                -typical_cents(g, sub),
                Some(merchant),
                sub,
            )
        }
        Kind::Savings => {
            let (description, cents) = *g.pick(&[
                ("APLICACAO POUPANCA", -1),
                ("RESGATE POUPANCA", 1),
                ("TRANSF ENTRE CONTAS POUPANCA", -1),
            ]);
            Text::new(
                description.to_owned(),
                cents * g.between(5_000, 80_000),
                None,
                "transfer.own_accounts",
            )
        }
    }
}

const PT_SHOPS: &[Party] = &[
    p("Continente", "CONTINENTE", "groceries.supermarkets", 5411),
    p("Pingo Doce", "PINGO DOCE", "groceries.supermarkets", 5411),
    p("Lidl", "LIDL", "groceries.supermarkets", 5411),
    p("Auchan", "AUCHAN", "groceries.supermarkets", 5411),
    p("Galp", "GALP", "transport.fuel", 5541),
    p("Repsol", "REPSOL", "transport.fuel", 5541),
    p("Worten", "WORTEN", "shopping.electronics", 5732),
    p("Fnac", "FNAC", "shopping.electronics", 5732),
    p("Comboios de Portugal", "CP COMBOIOS DE PORTUGAL", "transport.public", 4112),
    p("Metro de Lisboa", "METRO LISBOA", "transport.public", 4111),
    p("Farmácia Estácio", "", "health.pharmacy", 5912),
    p("Pastelaria Versailles", "", "food_and_drink.cafes", 5462),
    p("Padaria Portuguesa", "", "food_and_drink.cafes", 5462),
    p("Restaurante O Cantinho", "", "food_and_drink.restaurants", 5812),
    p("Café A Brasileira", "", "food_and_drink.cafes", 5814),
    p("Talho Central", "", "groceries.specialty", 5422),
];

const PT_CITIES: &[&str] = &["LISBOA", "PORTO", "BRAGA", "COIMBRA", "FARO"];

const PT_CREDITORS: &[Party] = &[
    p("EDP", "EDP COMERCIAL", "utilities.electricity", 0),
    p("MEO", "MEO SA", "telecom_and_internet.internet", 0),
    p("NOS", "NOS COMUNICACOES", "telecom_and_internet.internet", 0),
    p("Vodafone", "VODAFONE PORTUGAL", "telecom_and_internet.mobile", 0),
    p("Fidelidade", "FIDELIDADE COMPANHIA DE SEGUROS", "insurance.other", 0),
    p("EPAL", "EPAL", "utilities.water", 0),
    p("Ageas Seguros", "AGEAS SEGUROS", "insurance.vehicle", 0),
];

const PT_PEOPLE: &[&str] = &[
    "Rui Carvalho",
    "Inês Martins",
    "Tiago Gomes",
    "Catarina Ribeiro",
    "Miguel Sousa",
    "Joana Fernandes",
];

pub(super) fn portugal(g: &mut Gen) -> Text {
    #[derive(Clone, Copy)]
    enum Kind {
        Card,
        DirectDebit,
        Salary,
        Rent,
        Transfer,
        MbWay,
        Cash,
        Fee,
        Tax,
        Savings,
    }
    let (day, month) = g.day_month();
    match g.weighted(&[
        (42, Kind::Card),
        (17, Kind::DirectDebit),
        (6, Kind::Salary),
        (5, Kind::Rent),
        (4, Kind::Transfer),
        (4, Kind::MbWay),
        (6, Kind::Cash),
        (4, Kind::Fee),
        (2, Kind::Tax),
        (4, Kind::Savings),
    ]) {
        Kind::Card => {
            let shop = *g.pick(PT_SHOPS);
            let name = shop.written(Style::Plain);
            let city = *g.pick(PT_CITIES);
            let description = match g.between(0, 2) {
                0 => format!("COMPRA {name} {city} {day:02}/{month:02}"),
                1 => format!("COMPRA ELEC {}/{:02} {name}", g.digits(7), g.between(1, 99)),
                _ => format!("COMPRAS C.DEB {name} {city}"),
            };
            let text = Text::new(
                description,
                -typical_cents(g, shop.sub),
                Some(shop.name),
                shop.sub,
            );
            match g.chance(25) {
                true => text.hint(CategoryHint::Mcc(shop.mcc)),
                false => text,
            }
        }
        Kind::DirectDebit => {
            let creditor = *g.pick(PT_CREDITORS);
            let description = match g.between(0, 2) {
                0 => format!("DD {} {}", creditor.text, g.digits(9)),
                1 => format!("DEB. DIRECTO {}", creditor.text),
                _ => format!("COBRANCA SEPA {} REF {}", creditor.text, g.code(10)),
            };
            Text::new(
                description,
                -typical_cents(g, creditor.sub),
                Some(creditor.name),
                creditor.sub,
            )
        }
        Kind::Salary => {
            let (employer, written) = *g.pick(&[
                ("Acme Portugal", "ACME PORTUGAL LDA"),
                ("Sonae", "SONAE SGPS SA"),
                ("Câmara Municipal do Porto", "CAMARA MUNICIPAL DO PORTO"),
            ]);
            let description = match g.chance(50) {
                true => format!("TRF DE {written} VENCIMENTO {month:02}/2024"),
                false => format!("ORDENADO {written}"),
            };
            Text::new(
                description,
                typical_cents(g, "income.salary"),
                Some(employer),
                "income.salary",
            )
        }
        Kind::Rent => {
            let landlord = *g.pick(&["Manuel Pinto", "Helena Lopes"]);
            Text::new(
                format!("TRF P/ {} RENDA {month:02}/2024", super::upper(landlord, Style::Plain)),
                -typical_cents(g, "housing.rent"),
                Some(landlord),
                "housing.rent",
            )
        }
        Kind::Transfer => {
            let person = *g.pick(PT_PEOPLE);
            let written = super::upper(person, Style::Plain);
            let cents = g.between(1_000, 30_000);
            match g.chance(60) {
                true => Text::new(
                    format!("TRF P/ {written}"),
                    -cents,
                    Some(person),
                    "transfer.to_others",
                ),
                false => Text::new(
                    format!("TRF DE {written}"),
                    cents,
                    Some(person),
                    "transfer.from_others",
                ),
            }
        }
        Kind::MbWay => {
            let person = *g.pick(PT_PEOPLE);
            let written = super::upper(person, Style::Plain);
            Text::new(
                format!("TRF MB WAY P/ {written}"),
                -g.between(500, 6_000),
                Some(person),
                "transfer.to_others",
            )
        }
        Kind::Cash => {
            let city = *g.pick(PT_CITIES);
            let description = match g.chance(50) {
                true => format!("LEVANTAMENTO {city} {day:02}/{month:02}"),
                false => format!("LEV ATM {} {city}", g.digits(6)),
            };
            Text::new(
                description,
                -typical_cents(g, "cash.withdrawal"),
                None,
                "cash.withdrawal",
            )
        }
        Kind::Fee => {
            let (description, sub) = *g.pick(&[
                ("COMISSAO MANUTENCAO CONTA", "fees_and_charges.bank"),
                ("IMPOSTO DO SELO", "taxes.other"),
                ("COMISSAO TRF", "fees_and_charges.bank"),
            ]);
            Text::new(description.to_owned(), -typical_cents(g, sub), None, sub)
        }
        Kind::Tax => Text::new(
            format!("PAGAMENTO AO ESTADO AUTORIDADE TRIBUTARIA {}", g.digits(15)),
            -typical_cents(g, "taxes.income"),
            Some("Autoridade Tributária"),
            "taxes.income",
        ),
        Kind::Savings => {
            let (description, cents) = *g.pick(&[
                ("TRF P/ CONTA POUPANCA", -1),
                ("TRF DE CONTA POUPANCA", 1),
            ]);
            Text::new(
                description.to_owned(),
                cents * g.between(5_000, 80_000),
                None,
                "transfer.own_accounts",
            )
        }
    }
}
