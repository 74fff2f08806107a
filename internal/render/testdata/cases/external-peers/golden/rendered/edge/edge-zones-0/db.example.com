$ORIGIN example.com.
$TTL 300
example.com. 300 IN SOA ns1.example.com. dns-admin.example.com. 1 600 120 604800 30
example.com. 300 IN NS ns.partner.example.
example.com. 300 IN NS ns1.example.com.
ns1.example.com. 300 IN A 192.0.2.53
ns1.example.com. 300 IN AAAA 2001:db8::53
www.example.com. 300 IN AAAA 2001:db8::80
