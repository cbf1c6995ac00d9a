import csv,sys,collections
rows=[r for r in csv.reader(open(sys.argv[1])) if len(r)>6 and r[1]=='raw' and r[0]=='scan']
d=collections.defaultdict(dict)
for b,_,rnd,th,var,met,val,*_ in rows:
    d[(int(rnd),int(th))][(var,met)]=float(val)
import statistics as st
out=collections.defaultdict(list)
for (rnd,th),m in sorted(d.items()):
    pf=((rnd-1)%4) in (1,2)
    for (var,met),v in m.items():
        if met!='mb_s' or not var.startswith('kernel'): continue
        call=var.split('/')[1]
        k=v; kc=m[(var,'cpu_ns')]/1e3/(m[(var,'bytes')]/2**20)
        for lv in ('lpc_uring','lpc_sync'):
            out[(th,call,lv,pf)].append(m[(lv+'/'+call,'mb_s')]/k)
        out[(th,call,'kernelMBs',pf)].append(k)
        out[(th,call,'kernel_us_per_MiB',pf)].append(kc)
        out[(th,call,'lpc_uring_MBs',pf)].append(m[('lpc_uring/'+call,'mb_s')])
for key in sorted(set(k[:3] for k in out)):
    a=out[key+(False,)]; b=out[key+(True,)]
    print("%s thr %-5s %-18s  as-is: med %7.2f %s | prefaulted: med %7.2f %s"%(key[0],key[1],key[2],st.median(a),[round(x,2) for x in a],st.median(b),[round(x,2) for x in b]))
